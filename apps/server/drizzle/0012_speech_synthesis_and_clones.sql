CREATE TABLE "speech_settings" (
	"project_id" text PRIMARY KEY NOT NULL,
	"settings" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "synthesis_providers" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"vendor" text NOT NULL,
	"base_url" text NOT NULL,
	"model" text NOT NULL,
	"app_id" text DEFAULT '' NOT NULL,
	"key_id" text DEFAULT '' NOT NULL,
	"api_key_encrypted" text DEFAULT '' NOT NULL,
	"api_key_hint" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "voice_clones" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"provider_id" text NOT NULL,
	"vendor" text NOT NULL,
	"name" text NOT NULL,
	"vendor_voice_id" text DEFAULT '' NOT NULL,
	"status" text NOT NULL,
	"failure_reason" text DEFAULT '' NOT NULL,
	"sample_duration_ms" integer NOT NULL,
	"checked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "speech_settings" ADD CONSTRAINT "speech_settings_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "synthesis_providers" ADD CONSTRAINT "synthesis_providers_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "voice_clones" ADD CONSTRAINT "voice_clones_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "voice_clones" ADD CONSTRAINT "voice_clones_provider_id_synthesis_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "public"."synthesis_providers"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "synthesis_providers_project_idx" ON "synthesis_providers" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "voice_clones_project_idx" ON "voice_clones" USING btree ("project_id");