CREATE TABLE `app_instances` (
	`app_id` integer NOT NULL,
	`slot` integer NOT NULL,
	`deploy_id` integer NOT NULL,
	`container_name` text NOT NULL,
	`container_id` text,
	`address` text,
	`heal_failures` integer DEFAULT 0 NOT NULL,
	`heal_not_before` text,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	PRIMARY KEY(`app_id`, `slot`),
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `apps` ADD `replicas` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `apps` ADD `memory_mb` integer;--> statement-breakpoint
ALTER TABLE `apps` ADD `cpus` real;