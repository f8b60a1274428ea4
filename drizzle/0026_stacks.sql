CREATE TABLE `stack_deploys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`stack_id` integer NOT NULL,
	`trigger` text NOT NULL,
	`origin` text DEFAULT 'api' NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`phase` text DEFAULT 'forward' NOT NULL,
	`steps` text NOT NULL,
	`compose_sealed` text,
	`config_version` integer DEFAULT 0 NOT NULL,
	`error` text,
	`started_at` text,
	`completed_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	FOREIGN KEY (`stack_id`) REFERENCES `stacks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `stack_deploys_stack_idx` ON `stack_deploys` (`stack_id`,`id`);--> statement-breakpoint
CREATE TABLE `stack_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`stack_id` integer NOT NULL,
	`stack_deploy_id` integer,
	`service` text,
	`timestamp` text NOT NULL,
	`level` text DEFAULT 'info' NOT NULL,
	`message` text NOT NULL,
	FOREIGN KEY (`stack_id`) REFERENCES `stacks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `stack_events_stack_idx` ON `stack_events` (`stack_id`,`id`);--> statement-breakpoint
CREATE TABLE `stack_var_history` (
	`id` integer PRIMARY KEY NOT NULL,
	`stack_id` integer NOT NULL,
	`key` text NOT NULL,
	`action` text NOT NULL,
	`is_secret` integer NOT NULL,
	`required` integer NOT NULL,
	`value` text,
	`changed_at` text NOT NULL,
	`changed_by` text,
	FOREIGN KEY (`stack_id`) REFERENCES `stacks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `stack_var_history_stack_key_idx` ON `stack_var_history` (`stack_id`,`key`,`id`);--> statement-breakpoint
CREATE TABLE `stack_vars` (
	`id` integer PRIMARY KEY NOT NULL,
	`stack_id` integer NOT NULL,
	`key` text NOT NULL,
	`value` text,
	`secret_sealed` text,
	`is_secret` integer DEFAULT false NOT NULL,
	`required` integer DEFAULT false NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`stack_id`) REFERENCES `stacks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `stack_vars_stack_key_idx` ON `stack_vars` (`stack_id`,`key`);--> statement-breakpoint
CREATE TABLE `stacks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`compose` text,
	`repo_url` text,
	`branch` text DEFAULT 'main' NOT NULL,
	`compose_path` text DEFAULT 'docker-compose.yml' NOT NULL,
	`config_version` integer DEFAULT 0 NOT NULL,
	`owner` text DEFAULT 'rest' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `stacks_name_unique` ON `stacks` (`name`);--> statement-breakpoint
ALTER TABLE `apps` ADD `stack_id` integer REFERENCES stacks(id);--> statement-breakpoint
ALTER TABLE `apps` ADD `stack_service` text;--> statement-breakpoint
ALTER TABLE `deploys` ADD `stack_service` text;