CREATE TABLE "knowledge_batch_items" (
	"test_id" text NOT NULL,
	"position" integer NOT NULL,
	"question" text NOT NULL,
	"expected" text,
	"outcome" text,
	"verdict" text,
	"confidence" real,
	"expected_rank" integer,
	"top_segment_id" text,
	"top_text" text,
	CONSTRAINT "knowledge_batch_items_test_id_position_pk" PRIMARY KEY("test_id","position")
);
--> statement-breakpoint
CREATE TABLE "knowledge_batch_tests" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"knowledge_base_id" text NOT NULL,
	"file_name" text NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"error" text DEFAULT '' NOT NULL,
	"threshold" real NOT NULL,
	"top_k" integer DEFAULT 5 NOT NULL,
	"llm_provider_id" text,
	"mode" text DEFAULT 'fulltext' NOT NULL,
	"skipped_rows" jsonb NOT NULL,
	"lease_until" timestamp with time zone,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "knowledge_terms" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"standard" text NOT NULL,
	"variants" text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "knowledge_bases" ADD COLUMN "revision" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "knowledge_bases" ADD COLUMN "calibration" jsonb;--> statement-breakpoint
ALTER TABLE "knowledge_batch_items" ADD CONSTRAINT "knowledge_batch_items_test_id_knowledge_batch_tests_id_fk" FOREIGN KEY ("test_id") REFERENCES "public"."knowledge_batch_tests"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "knowledge_batch_tests" ADD CONSTRAINT "knowledge_batch_tests_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "knowledge_batch_tests" ADD CONSTRAINT "knowledge_batch_tests_knowledge_base_id_knowledge_bases_id_fk" FOREIGN KEY ("knowledge_base_id") REFERENCES "public"."knowledge_bases"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "knowledge_terms" ADD CONSTRAINT "knowledge_terms_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "knowledge_batch_tests_base_idx" ON "knowledge_batch_tests" USING btree ("project_id","knowledge_base_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "knowledge_terms_project_standard_idx" ON "knowledge_terms" USING btree ("project_id","standard");