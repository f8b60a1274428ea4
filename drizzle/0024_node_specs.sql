CREATE TABLE `node_spec_status` (
	`node_ref` text PRIMARY KEY NOT NULL,
	`generation` integer NOT NULL,
	`code` text,
	`error` text,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	FOREIGN KEY (`node_ref`) REFERENCES `node_specs`(`node_ref`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `node_specs` (
	`node_ref` text PRIMARY KEY NOT NULL,
	`availability` text,
	`labels` text,
	`generation` integer DEFAULT 1 NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
