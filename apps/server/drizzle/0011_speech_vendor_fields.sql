ALTER TABLE "speech_providers" ADD COLUMN "app_id" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "speech_providers" ADD COLUMN "key_id" text DEFAULT '' NOT NULL;