CREATE TABLE `imports` (
	`id` integer PRIMARY KEY NOT NULL,
	`status` text DEFAULT 'uploading' NOT NULL,
	`size_bytes` integer DEFAULT 0 NOT NULL,
	`backup_id` integer,
	`error` text,
	`code` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `restores` (
	`id` integer PRIMARY KEY NOT NULL,
	`backup_id` integer NOT NULL,
	`phase` text DEFAULT 'pending' NOT NULL,
	`safety_backup_id` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	`error` text,
	`code` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
