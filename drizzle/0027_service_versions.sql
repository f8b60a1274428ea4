CREATE TABLE `service_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`service_id` integer NOT NULL,
	`upgrade_id` integer,
	`kind` text NOT NULL,
	`message` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `service_events_service_idx` ON `service_events` (`service_id`);--> statement-breakpoint
CREATE TABLE `service_upgrades` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`service_id` integer NOT NULL,
	`from_version` text NOT NULL,
	`to_version` text NOT NULL,
	`from_image` text NOT NULL,
	`to_image` text NOT NULL,
	`from_container` text NOT NULL,
	`to_container` text NOT NULL,
	`from_data_dir` text NOT NULL,
	`to_data_dir` text NOT NULL,
	`status` text DEFAULT 'running' NOT NULL,
	`step` text DEFAULT 'backup' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`request` text,
	`backup_path` text,
	`verification` text,
	`error` text,
	`keep_days` integer DEFAULT 7 NOT NULL,
	`switched_at` text,
	`finished_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `service_upgrades_service_idx` ON `service_upgrades` (`service_id`);--> statement-breakpoint
ALTER TABLE `services` ADD `version` text;--> statement-breakpoint
ALTER TABLE `service_status` ADD `live_version` text;--> statement-breakpoint
ALTER TABLE `service_status` ADD `live_container` text;--> statement-breakpoint
ALTER TABLE `service_status` ADD `live_data_dir` text;--> statement-breakpoint
-- Services made before versions run what their default image was then (catalog LEGACY_VERSIONS).
UPDATE `services` SET `version` = CASE `type` WHEN 'postgres' THEN '16' WHEN 'mysql' THEN '8.0' WHEN 'redis' THEN '7' ELSE '1' END WHERE `version` IS NULL;
