ALTER TABLE `imports` ADD `source_target_id` integer;--> statement-breakpoint
ALTER TABLE `imports` ADD `source_key` text;