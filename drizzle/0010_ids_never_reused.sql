PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_api_tokens` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`last_used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_api_tokens`("id", "user_id", "name", "token_hash", "created_at", "last_used_at") SELECT "id", "user_id", "name", "token_hash", "created_at", "last_used_at" FROM `api_tokens`;--> statement-breakpoint
DROP TABLE `api_tokens`;--> statement-breakpoint
ALTER TABLE `__new_api_tokens` RENAME TO `api_tokens`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `api_tokens_token_hash_unique` ON `api_tokens` (`token_hash`);--> statement-breakpoint
CREATE TABLE `__new_users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`username` text NOT NULL,
	`password_hash` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_users`("id", "username", "password_hash", "created_at") SELECT "id", "username", "password_hash", "created_at" FROM `users`;--> statement-breakpoint
DROP TABLE `users`;--> statement-breakpoint
ALTER TABLE `__new_users` RENAME TO `users`;--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_unique` ON `users` (`username`);--> statement-breakpoint
CREATE TABLE `__new_apps` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
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
	`ci_workflow` text,
	`replicas` integer DEFAULT 1 NOT NULL,
	`memory_mb` integer,
	`cpus` real,
	`config_version` integer DEFAULT 0 NOT NULL,
	`owner` text DEFAULT 'rest' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_apps`("id", "name", "app_type", "build_mode", "project_type", "source", "repo_url", "branch", "internal_port", "image_ref", "domain", "fallback_port", "access_mode", "health_check_path", "ci_workflow", "replicas", "memory_mb", "cpus", "config_version", "owner", "created_at", "updated_at") SELECT "id", "name", "app_type", "build_mode", "project_type", "source", "repo_url", "branch", "internal_port", "image_ref", "domain", "fallback_port", "access_mode", "health_check_path", "ci_workflow", "replicas", "memory_mb", "cpus", "config_version", "owner", "created_at", "updated_at" FROM `apps`;--> statement-breakpoint
DROP TABLE `apps`;--> statement-breakpoint
ALTER TABLE `__new_apps` RENAME TO `apps`;--> statement-breakpoint
CREATE UNIQUE INDEX `apps_name_unique` ON `apps` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `apps_domain_unique` ON `apps` (`domain`);--> statement-breakpoint
CREATE UNIQUE INDEX `apps_fallback_port_unique` ON `apps` (`fallback_port`);--> statement-breakpoint
CREATE TABLE `__new_deploys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_id` integer NOT NULL,
	`image_ref` text,
	`commit_sha` text,
	`trigger` text NOT NULL,
	`origin` text DEFAULT 'api' NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`step` text,
	`error` text,
	`env_snapshot_sealed` text,
	`env_diff` text,
	`config_version` integer,
	`staging_container` text,
	`previous_container` text,
	`deadline` text,
	`watch_until` text,
	`build_port` integer,
	`attempt_step` text,
	`step_attempts` integer DEFAULT 0 NOT NULL,
	`started_at` text,
	`completed_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_deploys`("id", "app_id", "image_ref", "commit_sha", "trigger", "origin", "status", "step", "error", "env_snapshot_sealed", "env_diff", "config_version", "staging_container", "previous_container", "deadline", "watch_until", "build_port", "attempt_step", "step_attempts", "started_at", "completed_at", "created_at") SELECT "id", "app_id", "image_ref", "commit_sha", "trigger", "origin", "status", "step", "error", "env_snapshot_sealed", "env_diff", "config_version", "staging_container", "previous_container", "deadline", "watch_until", "build_port", "attempt_step", "step_attempts", "started_at", "completed_at", "created_at" FROM `deploys`;--> statement-breakpoint
DROP TABLE `deploys`;--> statement-breakpoint
ALTER TABLE `__new_deploys` RENAME TO `deploys`;--> statement-breakpoint
CREATE INDEX `deploys_app_idx` ON `deploys` (`app_id`,`id`);--> statement-breakpoint
CREATE TABLE `__new_app_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_id` integer NOT NULL,
	`timestamp` text NOT NULL,
	`level` text DEFAULT 'info' NOT NULL,
	`step` text NOT NULL,
	`message` text NOT NULL,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_app_events`("id", "app_id", "timestamp", "level", "step", "message") SELECT "id", "app_id", "timestamp", "level", "step", "message" FROM `app_events`;--> statement-breakpoint
DROP TABLE `app_events`;--> statement-breakpoint
ALTER TABLE `__new_app_events` RENAME TO `app_events`;--> statement-breakpoint
CREATE INDEX `app_events_app_idx` ON `app_events` (`app_id`,`id`);--> statement-breakpoint
CREATE TABLE `__new_deploy_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`deploy_id` integer NOT NULL,
	`timestamp` text NOT NULL,
	`level` text DEFAULT 'info' NOT NULL,
	`step` text NOT NULL,
	`message` text NOT NULL,
	FOREIGN KEY (`deploy_id`) REFERENCES `deploys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_deploy_events`("id", "deploy_id", "timestamp", "level", "step", "message") SELECT "id", "deploy_id", "timestamp", "level", "step", "message" FROM `deploy_events`;--> statement-breakpoint
DROP TABLE `deploy_events`;--> statement-breakpoint
ALTER TABLE `__new_deploy_events` RENAME TO `deploy_events`;--> statement-breakpoint
CREATE INDEX `deploy_events_deploy_idx` ON `deploy_events` (`deploy_id`,`id`);--> statement-breakpoint
CREATE TABLE `__new_services` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
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
INSERT INTO `__new_services`("id", "name", "type", "image_ref", "status", "desired_running", "container_name", "container_id", "internal_port", "data_dir", "credentials_sealed", "error", "heal_failures", "heal_not_before", "owner", "deleted_at", "purge_on_delete", "created_at", "updated_at") SELECT "id", "name", "type", "image_ref", "status", "desired_running", "container_name", "container_id", "internal_port", "data_dir", "credentials_sealed", "error", "heal_failures", "heal_not_before", "owner", "deleted_at", "purge_on_delete", "created_at", "updated_at" FROM `services`;--> statement-breakpoint
DROP TABLE `services`;--> statement-breakpoint
ALTER TABLE `__new_services` RENAME TO `services`;--> statement-breakpoint
CREATE UNIQUE INDEX `services_name_unique` ON `services` (`name`);--> statement-breakpoint
CREATE TABLE `__new_backups` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`filename` text NOT NULL,
	`size_bytes` integer DEFAULT 0 NOT NULL,
	`type` text DEFAULT 'full' NOT NULL,
	`status` text DEFAULT 'completed' NOT NULL,
	`trigger` text DEFAULT 'manual' NOT NULL,
	`error` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_backups`("id", "filename", "size_bytes", "type", "status", "trigger", "error", "created_at") SELECT "id", "filename", "size_bytes", "type", "status", "trigger", "error", "created_at" FROM `backups`;--> statement-breakpoint
DROP TABLE `backups`;--> statement-breakpoint
ALTER TABLE `__new_backups` RENAME TO `backups`;--> statement-breakpoint
CREATE UNIQUE INDEX `backups_filename_unique` ON `backups` (`filename`);--> statement-breakpoint
CREATE TABLE `__new_imports` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`status` text DEFAULT 'uploading' NOT NULL,
	`size_bytes` integer DEFAULT 0 NOT NULL,
	`backup_id` integer,
	`error` text,
	`code` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_imports`("id", "status", "size_bytes", "backup_id", "error", "code", "created_at", "updated_at") SELECT "id", "status", "size_bytes", "backup_id", "error", "code", "created_at", "updated_at" FROM `imports`;--> statement-breakpoint
DROP TABLE `imports`;--> statement-breakpoint
ALTER TABLE `__new_imports` RENAME TO `imports`;--> statement-breakpoint
CREATE TABLE `__new_restores` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`backup_id` integer NOT NULL,
	`phase` text DEFAULT 'pending' NOT NULL,
	`safety_backup_id` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	`error` text,
	`code` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_restores`("id", "backup_id", "phase", "safety_backup_id", "attempts", "error", "code", "created_at", "updated_at") SELECT "id", "backup_id", "phase", "safety_backup_id", "attempts", "error", "code", "created_at", "updated_at" FROM `restores`;--> statement-breakpoint
DROP TABLE `restores`;--> statement-breakpoint
ALTER TABLE `__new_restores` RENAME TO `restores`;