CREATE TABLE "call_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"kind" text NOT NULL,
	"payload" jsonb NOT NULL,
	"claimed_by" text,
	"claimed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "recording_lease_owner" text;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "recording_lease_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "lease_owner" text;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "lease_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "outbox" ADD COLUMN "meta" jsonb;--> statement-breakpoint
ALTER TABLE "project_numbers" ADD COLUMN "inbound_assistant_id" text;--> statement-breakpoint
ALTER TABLE "call_requests" ADD CONSTRAINT "call_requests_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_numbers" ADD CONSTRAINT "project_numbers_inbound_assistant_id_assistants_id_fk" FOREIGN KEY ("inbound_assistant_id") REFERENCES "public"."assistants"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "calls_live_idx" ON "calls" USING btree ("project_id","direction") WHERE "calls"."status" <> 'ended';--> statement-breakpoint
CREATE UNIQUE INDEX "project_numbers_inbound_unique" ON "project_numbers" USING btree ("number") WHERE "project_numbers"."inbound_assistant_id" is not null;