CREATE TABLE `previews` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_id` integer NOT NULL,
	`parent_id` integer NOT NULL,
	`pr_number` integer NOT NULL,
	`head_sha` text NOT NULL,
	`head_ref` text NOT NULL,
	`fork` integer DEFAULT false NOT NULL,
	`last_commit_at` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`parent_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `previews_app_idx` ON `previews` (`app_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `previews_parent_pr_idx` ON `previews` (`parent_id`,`pr_number`);--> statement-breakpoint
CREATE INDEX `previews_parent_idx` ON `previews` (`parent_id`);--> statement-breakpoint
ALTER TABLE `apps` ADD `previews` text;