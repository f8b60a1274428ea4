ALTER TABLE `app_status` ADD `serving` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `app_status` ADD `status_reason` text;--> statement-breakpoint
ALTER TABLE `app_status` ADD `route_error` text;