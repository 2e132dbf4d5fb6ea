CREATE TABLE "publish_reviews" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"kind" text NOT NULL,
	"target_id" text NOT NULL,
	"target_name" text NOT NULL,
	"status" text NOT NULL,
	"snapshot" jsonb NOT NULL,
	"base_version" integer,
	"note" text DEFAULT '' NOT NULL,
	"submitted_by" text,
	"submitted_at" timestamp with time zone DEFAULT now() NOT NULL,
	"decided_by" text,
	"decided_at" timestamp with time zone,
	"comment" text DEFAULT '' NOT NULL,
	"published_version" integer
);
--> statement-breakpoint
ALTER TABLE "assistant_versions" ADD COLUMN "submitted_by" text;--> statement-breakpoint
ALTER TABLE "assistant_versions" ADD COLUMN "review_id" text;--> statement-breakpoint
ALTER TABLE "call_flow_versions" ADD COLUMN "submitted_by" text;--> statement-breakpoint
ALTER TABLE "call_flow_versions" ADD COLUMN "review_id" text;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "review_required" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "publish_reviews" ADD CONSTRAINT "publish_reviews_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "publish_reviews" ADD CONSTRAINT "publish_reviews_submitted_by_users_id_fk" FOREIGN KEY ("submitted_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "publish_reviews" ADD CONSTRAINT "publish_reviews_decided_by_users_id_fk" FOREIGN KEY ("decided_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "publish_reviews_project_idx" ON "publish_reviews" USING btree ("project_id","status","submitted_at");--> statement-breakpoint
CREATE UNIQUE INDEX "publish_reviews_one_pending_key" ON "publish_reviews" USING btree ("kind","target_id") WHERE status = 'pending';--> statement-breakpoint
ALTER TABLE "assistant_versions" ADD CONSTRAINT "assistant_versions_submitted_by_users_id_fk" FOREIGN KEY ("submitted_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "call_flow_versions" ADD CONSTRAINT "call_flow_versions_submitted_by_users_id_fk" FOREIGN KEY ("submitted_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;