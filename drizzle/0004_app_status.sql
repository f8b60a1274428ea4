CREATE TABLE `app_status` (
	`app_id` integer PRIMARY KEY NOT NULL,
	`status` text DEFAULT 'inactive' NOT NULL,
	`live_deploy_id` integer,
	`live_image` text,
	`image_basis` text,
	`port` integer,
	`port_basis` integer,
	`live_container_name` text,
	`live_container_id` text,
	`live_address` text,
	`heal_failures` integer DEFAULT 0 NOT NULL,
	`heal_not_before` text,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
-- Existing facts move over before their columns go. `internal_port` already holds the port the live
-- container listens on (the pipeline used to write a build provider's port into it), so it is both the
-- observed port and its basis; the image likewise.
INSERT INTO `app_status` (`app_id`, `status`, `live_deploy_id`, `live_image`, `image_basis`, `port`, `port_basis`,
	`live_container_name`, `live_container_id`, `live_address`, `heal_failures`, `heal_not_before`)
SELECT a.`id`, a.`status`, a.`current_deploy_id`, COALESCE(d.`image_ref`, a.`image_ref`), a.`image_ref`,
	CASE WHEN a.`current_deploy_id` IS NOT NULL THEN a.`internal_port` END, a.`internal_port`,
	a.`live_container_name`, a.`live_container_id`, a.`live_address`, a.`heal_failures`, a.`heal_not_before`
FROM `apps` a LEFT JOIN `deploys` d ON d.`id` = a.`current_deploy_id`;
--> statement-breakpoint
ALTER TABLE `apps` DROP COLUMN `status`;--> statement-breakpoint
ALTER TABLE `apps` DROP COLUMN `live_container_name`;--> statement-breakpoint
ALTER TABLE `apps` DROP COLUMN `live_container_id`;--> statement-breakpoint
ALTER TABLE `apps` DROP COLUMN `live_address`;--> statement-breakpoint
ALTER TABLE `apps` DROP COLUMN `current_deploy_id`;--> statement-breakpoint
ALTER TABLE `apps` DROP COLUMN `heal_failures`;--> statement-breakpoint
ALTER TABLE `apps` DROP COLUMN `heal_not_before`;