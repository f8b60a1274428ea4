CREATE TABLE `api_tokens` (
	`id` integer PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`last_used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_tokens_token_hash_unique` ON `api_tokens` (`token_hash`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` integer PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`last_seen_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_token_hash_unique` ON `sessions` (`token_hash`);--> statement-breakpoint
CREATE INDEX `sessions_user_idx` ON `sessions` (`user_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY NOT NULL,
	`username` text NOT NULL,
	`password_hash` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_unique` ON `users` (`username`);--> statement-breakpoint
CREATE TABLE `apps` (
	`id` integer PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`app_type` text DEFAULT 'managed' NOT NULL,
	`build_mode` text DEFAULT 'external_ci' NOT NULL,
	`project_type` text DEFAULT 'auto' NOT NULL,
	`source` text,
	`repo_url` text,
	`branch` text DEFAULT 'main' NOT NULL,
	`internal_port` integer DEFAULT 3000 NOT NULL,
	`image_ref` text,
	`domain` text,
	`fallback_port` integer,
	`access_mode` text DEFAULT 'port' NOT NULL,
	`health_check_path` text DEFAULT '/' NOT NULL,
	`status` text DEFAULT 'inactive' NOT NULL,
	`live_container_name` text,
	`live_container_id` text,
	`live_address` text,
	`current_deploy_id` integer,
	`config_version` integer DEFAULT 0 NOT NULL,
	`heal_failures` integer DEFAULT 0 NOT NULL,
	`heal_not_before` text,
	`owner` text DEFAULT 'rest' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `apps_name_unique` ON `apps` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `apps_domain_unique` ON `apps` (`domain`);--> statement-breakpoint
CREATE UNIQUE INDEX `apps_fallback_port_unique` ON `apps` (`fallback_port`);--> statement-breakpoint
CREATE TABLE `deploys` (
	`id` integer PRIMARY KEY NOT NULL,
	`app_id` integer NOT NULL,
	`image_ref` text,
	`commit_sha` text,
	`trigger` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`step` text,
	`error` text,
	`env_snapshot_sealed` text,
	`env_diff` text,
	`config_version` integer,
	`staging_container` text,
	`previous_container` text,
	`deadline` text,
	`started_at` text,
	`completed_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `deploys_app_idx` ON `deploys` (`app_id`,`id`);--> statement-breakpoint
CREATE TABLE `app_events` (
	`id` integer PRIMARY KEY NOT NULL,
	`app_id` integer NOT NULL,
	`timestamp` text NOT NULL,
	`level` text DEFAULT 'info' NOT NULL,
	`step` text NOT NULL,
	`message` text NOT NULL,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `app_events_app_idx` ON `app_events` (`app_id`,`id`);--> statement-breakpoint
CREATE TABLE `deploy_events` (
	`id` integer PRIMARY KEY NOT NULL,
	`deploy_id` integer NOT NULL,
	`timestamp` text NOT NULL,
	`level` text DEFAULT 'info' NOT NULL,
	`step` text NOT NULL,
	`message` text NOT NULL,
	FOREIGN KEY (`deploy_id`) REFERENCES `deploys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `deploy_events_deploy_idx` ON `deploy_events` (`deploy_id`,`id`);--> statement-breakpoint
CREATE TABLE `env_history` (
	`id` integer PRIMARY KEY NOT NULL,
	`app_id` integer NOT NULL,
	`key` text NOT NULL,
	`action` text NOT NULL,
	`is_secret` integer NOT NULL,
	`required` integer NOT NULL,
	`value` text,
	`changed_at` text NOT NULL,
	`changed_by` text,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `env_history_app_key_idx` ON `env_history` (`app_id`,`key`,`id`);--> statement-breakpoint
CREATE TABLE `env_vars` (
	`id` integer PRIMARY KEY NOT NULL,
	`app_id` integer NOT NULL,
	`key` text NOT NULL,
	`value` text,
	`secret_sealed` text,
	`is_secret` integer DEFAULT false NOT NULL,
	`required` integer DEFAULT false NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `env_vars_app_key_idx` ON `env_vars` (`app_id`,`key`);--> statement-breakpoint
CREATE TABLE `service_links` (
	`id` integer PRIMARY KEY NOT NULL,
	`app_id` integer NOT NULL,
	`service_id` integer NOT NULL,
	`alias` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `service_links_app_service_idx` ON `service_links` (`app_id`,`service_id`);--> statement-breakpoint
CREATE TABLE `services` (
	`id` integer PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`image_ref` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`desired_running` integer DEFAULT true NOT NULL,
	`container_name` text NOT NULL,
	`container_id` text,
	`internal_port` integer NOT NULL,
	`data_dir` text NOT NULL,
	`credentials_sealed` text NOT NULL,
	`error` text,
	`heal_failures` integer DEFAULT 0 NOT NULL,
	`heal_not_before` text,
	`owner` text DEFAULT 'rest' NOT NULL,
	`deleted_at` text,
	`purge_on_delete` integer DEFAULT false NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `services_name_unique` ON `services` (`name`);--> statement-breakpoint
CREATE TABLE `backups` (
	`id` integer PRIMARY KEY NOT NULL,
	`filename` text NOT NULL,
	`size_bytes` integer DEFAULT 0 NOT NULL,
	`type` text DEFAULT 'full' NOT NULL,
	`status` text DEFAULT 'completed' NOT NULL,
	`error` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `backups_filename_unique` ON `backups` (`filename`);--> statement-breakpoint
CREATE TABLE `codehost_installations` (
	`id` integer PRIMARY KEY NOT NULL,
	`installation_id` integer NOT NULL,
	`account` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`deleted_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `codehost_installations_installation_id_unique` ON `codehost_installations` (`installation_id`);--> statement-breakpoint
CREATE TABLE `manifest_applies` (
	`id` integer PRIMARY KEY NOT NULL,
	`source` text NOT NULL,
	`location` text NOT NULL,
	`revision` text,
	`applied_at` text NOT NULL,
	`resources` text NOT NULL,
	`errors` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `manifest_applies_source_unique` ON `manifest_applies` (`source`);--> statement-breakpoint
CREATE TABLE `settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` integer PRIMARY KEY NOT NULL,
	`delivery_id` text NOT NULL,
	`event` text NOT NULL,
	`result` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_delivery_id_unique` ON `webhook_deliveries` (`delivery_id`);