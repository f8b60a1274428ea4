CREATE TABLE `registry_credentials` (
	`id` integer PRIMARY KEY NOT NULL,
	`server` text NOT NULL,
	`username` text NOT NULL,
	`secret_sealed` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `registry_credentials_server_unique` ON `registry_credentials` (`server`);