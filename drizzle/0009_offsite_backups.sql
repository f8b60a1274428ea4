CREATE TABLE `backup_targets` (
	`id` integer PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`endpoint` text,
	`region` text NOT NULL,
	`bucket` text NOT NULL,
	`prefix` text DEFAULT '' NOT NULL,
	`credentials` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `backup_targets_name_unique` ON `backup_targets` (`name`);--> statement-breakpoint
CREATE TABLE `backup_uploads` (
	`id` integer PRIMARY KEY NOT NULL,
	`backup_id` integer NOT NULL,
	`target_id` integer NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`key` text NOT NULL,
	`sha256` text,
	`size_bytes` integer,
	`verified_at` text,
	`error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	FOREIGN KEY (`backup_id`) REFERENCES `backups`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_id`) REFERENCES `backup_targets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `backup_uploads_backup_target` ON `backup_uploads` (`backup_id`,`target_id`);