ALTER TABLE `apps` ADD `drain_seconds` integer DEFAULT 30 NOT NULL;--> statement-breakpoint
ALTER TABLE `deploys` ADD `drain_from` text;--> statement-breakpoint
ALTER TABLE `deploys` ADD `drain_until` text;--> statement-breakpoint
ALTER TABLE `deploys` ADD `drain_open` integer;