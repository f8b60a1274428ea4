ALTER TABLE `services` ADD `preview_app_id` integer;--> statement-breakpoint
ALTER TABLE `services` ADD `preview_source_id` integer;--> statement-breakpoint
ALTER TABLE `previews` ADD `host` text DEFAULT 'github' NOT NULL;--> statement-breakpoint
ALTER TABLE `previews` ADD `repository` text;--> statement-breakpoint
ALTER TABLE `previews` ADD `comment_id` text;--> statement-breakpoint
ALTER TABLE `previews` ADD `reported` text;