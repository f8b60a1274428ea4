ALTER TABLE `apps` ADD `code_host` text;--> statement-breakpoint
ALTER TABLE `apps` ADD `repo_token_sealed` text;