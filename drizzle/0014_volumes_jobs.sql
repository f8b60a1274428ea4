CREATE TABLE `job_runs` (
	`id` integer PRIMARY KEY NOT NULL,
	`app_id` integer NOT NULL,
	`job` text,
	`trigger` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`command` text NOT NULL,
	`timeout_seconds` integer NOT NULL,
	`scheduled_for` text,
	`container_name` text,
	`image` text,
	`started_at` text,
	`finished_at` text,
	`exit_code` integer,
	`output` text,
	`error` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `job_runs_app_idx` ON `job_runs` (`app_id`,`job`,`id`);--> statement-breakpoint
CREATE INDEX `job_runs_status_idx` ON `job_runs` (`status`);--> statement-breakpoint
CREATE TABLE `job_ticks` (
	`app_id` integer NOT NULL,
	`job` text NOT NULL,
	`last_tick_at` text NOT NULL,
	PRIMARY KEY(`app_id`, `job`),
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `apps` ADD `volumes` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `apps` ADD `deploy_strategy` text DEFAULT 'blue_green' NOT NULL;--> statement-breakpoint
ALTER TABLE `apps` ADD `jobs` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `deploys` ADD `old_stopped_at` text;