CREATE TABLE `service_backup_policies` (
	`service_id` integer PRIMARY KEY NOT NULL,
	`interval_minutes` integer DEFAULT 0 NOT NULL,
	`retain` integer DEFAULT 7 NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `service_backup_uploads` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`backup_id` integer NOT NULL,
	`target_id` integer NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`key` text NOT NULL,
	`sha256` text,
	`size_bytes` integer,
	`verified_at` text,
	`verified_by` text,
	`error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	FOREIGN KEY (`backup_id`) REFERENCES `service_backups`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_id`) REFERENCES `backup_targets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `service_backup_uploads_backup_target` ON `service_backup_uploads` (`backup_id`,`target_id`);--> statement-breakpoint
CREATE TABLE `service_backups` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`service_id` integer NOT NULL,
	`service_name` text NOT NULL,
	`service_type` text NOT NULL,
	`version` text NOT NULL,
	`trigger` text NOT NULL,
	`status` text DEFAULT 'running' NOT NULL,
	`filename` text NOT NULL,
	`size_bytes` integer,
	`error` text,
	`upgrade_id` integer,
	`full_backup_id` integer,
	`completed_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `service_backups_service_idx` ON `service_backups` (`service_id`);--> statement-breakpoint
CREATE TABLE `service_restores` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`backup_id` integer NOT NULL,
	`service_id` integer NOT NULL,
	`service_name` text NOT NULL,
	`into_new` integer DEFAULT false NOT NULL,
	`status` text DEFAULT 'running' NOT NULL,
	`step` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`safety_backup_id` integer,
	`error` text,
	`finished_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `service_restores_service_idx` ON `service_restores` (`service_id`);