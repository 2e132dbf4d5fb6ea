CREATE TABLE "call_flow_versions" (
	"flow_id" text NOT NULL,
	"version" integer NOT NULL,
	"graph" jsonb NOT NULL,
	"note" text DEFAULT '' NOT NULL,
	"published_by" text,
	"published_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "call_flow_versions_flow_id_version_pk" PRIMARY KEY("flow_id","version")
);
--> statement-breakpoint
CREATE TABLE "call_flows" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"draft" jsonb NOT NULL,
	"published_version" integer,
	"draft_changed" boolean DEFAULT true NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "flow_audio" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"storage_key" text NOT NULL,
	"duration_ms" integer NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "project_numbers_inbound_unique";--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "flow_id" text;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "flow_name" text;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "flow_version" integer;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "flow_path" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "project_numbers" ADD COLUMN "inbound_flow_id" text;--> statement-breakpoint
ALTER TABLE "call_flow_versions" ADD CONSTRAINT "call_flow_versions_flow_id_call_flows_id_fk" FOREIGN KEY ("flow_id") REFERENCES "public"."call_flows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "call_flow_versions" ADD CONSTRAINT "call_flow_versions_published_by_users_id_fk" FOREIGN KEY ("published_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "call_flows" ADD CONSTRAINT "call_flows_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "call_flows" ADD CONSTRAINT "call_flows_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "flow_audio" ADD CONSTRAINT "flow_audio_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "flow_audio" ADD CONSTRAINT "flow_audio_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "call_flows_project_id_unique" ON "call_flows" USING btree ("project_id","id");--> statement-breakpoint
CREATE INDEX "call_flows_project_idx" ON "call_flows" USING btree ("project_id","updated_at");--> statement-breakpoint
CREATE INDEX "flow_audio_project_idx" ON "flow_audio" USING btree ("project_id");--> statement-breakpoint
ALTER TABLE "project_numbers" ADD CONSTRAINT "project_numbers_flow_fk" FOREIGN KEY ("project_id","inbound_flow_id") REFERENCES "public"."call_flows"("project_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "calls_project_flow_started_idx" ON "calls" USING btree ("project_id","flow_id","started_at") WHERE "calls"."flow_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "project_numbers_inbound_unique" ON "project_numbers" USING btree ("number") WHERE "project_numbers"."inbound_assistant_id" is not null or "project_numbers"."inbound_flow_id" is not null;--> statement-breakpoint
ALTER TABLE "project_numbers" ADD CONSTRAINT "project_numbers_one_inbound" CHECK ("project_numbers"."inbound_assistant_id" is null or "project_numbers"."inbound_flow_id" is null);