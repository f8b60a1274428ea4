CREATE TABLE `service_status` (
	`service_id` integer PRIMARY KEY NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`error` text,
	`container_id` text,
	`image_ref` text,
	`heal_failures` integer DEFAULT 0 NOT NULL,
	`heal_not_before` text,
	`start_seen_at` text,
	`activated_at` text,
	`provisioned_at` text,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
-- Existing facts move over before their columns go. `image_ref` was rewritten by the reconciler with the
-- image it resolved, so it is both the spec's and the observed image. A Garage service that was ever active
-- was provisioned (it becomes active only after), and its key is already in its sealed credentials.
INSERT INTO `service_status` (`service_id`, `status`, `error`, `container_id`, `image_ref`, `heal_failures`,
	`heal_not_before`, `activated_at`, `provisioned_at`, `updated_at`)
SELECT `id`, `status`, `error`, `container_id`, `image_ref`, `heal_failures`, `heal_not_before`, `activated_at`,
	CASE WHEN `type` = 'garage' AND (`activated_at` IS NOT NULL OR `status` = 'active') THEN COALESCE(`activated_at`, `updated_at`) END,
	`updated_at`
FROM `services`;
--> statement-breakpoint
ALTER TABLE `services` ADD `start_requested_at` text;--> statement-breakpoint
ALTER TABLE `services` DROP COLUMN `status`;--> statement-breakpoint
ALTER TABLE `services` DROP COLUMN `container_id`;--> statement-breakpoint
ALTER TABLE `services` DROP COLUMN `error`;--> statement-breakpoint
ALTER TABLE `services` DROP COLUMN `heal_failures`;--> statement-breakpoint
ALTER TABLE `services` DROP COLUMN `heal_not_before`;--> statement-breakpoint
ALTER TABLE `services` DROP COLUMN `activated_at`;