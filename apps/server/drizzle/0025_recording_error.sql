ALTER TABLE "calls" ADD COLUMN "recording_error" text;--> statement-breakpoint
-- Until now a failed recording kept its reason in recording_key; it moves to its own column.
UPDATE "calls" SET "recording_error" = "recording_key", "recording_key" = NULL WHERE "recording" = 'failed';
