ALTER TABLE `apps` ADD `ci_workflow` text;--> statement-breakpoint
ALTER TABLE `deploys` ADD `watch_until` text;--> statement-breakpoint
ALTER TABLE `deploys` ADD `build_port` integer;--> statement-breakpoint
ALTER TABLE `backups` ADD `trigger` text DEFAULT 'manual' NOT NULL;