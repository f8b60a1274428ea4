ALTER TABLE `deploys` ADD `attempt_step` text;--> statement-breakpoint
ALTER TABLE `deploys` ADD `step_attempts` integer DEFAULT 0 NOT NULL;