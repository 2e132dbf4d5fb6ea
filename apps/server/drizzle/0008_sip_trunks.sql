CREATE TABLE "sip_trunks" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"transport" text DEFAULT 'udp' NOT NULL,
	"registrar" text DEFAULT '' NOT NULL,
	"username" text DEFAULT '' NOT NULL,
	"auth_username" text DEFAULT '' NOT NULL,
	"password_encrypted" text DEFAULT '' NOT NULL,
	"password_hint" text DEFAULT '' NOT NULL,
	"register_expires" integer DEFAULT 300 NOT NULL,
	"outbound_proxy" text DEFAULT '' NOT NULL,
	"signalling_address" text DEFAULT '' NOT NULL,
	"peer_addresses" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"codecs" jsonb DEFAULT '["PCMA","PCMU"]'::jsonb NOT NULL,
	"caller_id_format" text DEFAULT 'national' NOT NULL,
	"max_concurrent" integer DEFAULT 30 NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"reg_status" text DEFAULT 'unregistered' NOT NULL,
	"reg_detail" text DEFAULT '' NOT NULL,
	"reg_at" timestamp with time zone,
	"options_at" timestamp with time zone,
	"options_rtt_ms" integer,
	"options_status" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "project_numbers" ADD COLUMN "trunk_id" text;--> statement-breakpoint
ALTER TABLE "sip_trunks" ADD CONSTRAINT "sip_trunks_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "sip_trunks_project_name_key" ON "sip_trunks" USING btree ("project_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "sip_trunks_project_id_key" ON "sip_trunks" USING btree ("project_id","id");--> statement-breakpoint
ALTER TABLE "project_numbers" ADD CONSTRAINT "project_numbers_trunk_fk" FOREIGN KEY ("project_id","trunk_id") REFERENCES "public"."sip_trunks"("project_id","id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "project_numbers_trunk_idx" ON "project_numbers" USING btree ("trunk_id");