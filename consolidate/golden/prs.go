package golden

// The pull-request-shaped golden set: the history of a made-up invoicing
// service, "ledger", written for this set. Each pull request or issue is
// one batch; the scripted extraction returns the facts listed here (so
// what is measured is consolidation and recall, not the model's reading),
// and each fact says which earlier memories it must retire.

// PRFact is a fact the scripted extraction returns for a pull request,
// and what it must do to the memories before it.
type PRFact struct {
	Kind        string // decision, gotcha, convention or dead-end
	Slug        string
	Description string
	Fact        string
	Topic       string
	Keywords    []string
	Retires     []string // slugs of earlier memories it must supersede
}

// PRItem is one merged pull request or issue of the history.
type PRItem struct {
	Source string // "PR#101" or "issue#110"
	Title  string
	Body   string
	Paths  []string
	Facts  []PRFact
}

// PRQuery is a new pull request opening: the memories its recall comment
// must show (slugs) and those it must never show (superseded).
type PRQuery struct {
	Title, Body string
	Paths       []string
	Want        []string
	Stale       []string
}

// PRHistory is the history, ingested in order.
var PRHistory = []PRItem{
	{Source: "PR#101", Title: "Store invoices in PostgreSQL", Paths: []string{"internal/store/postgres.go", "db/migrations/0001_invoices.sql"},
		Body: "Invoices move out of the JSON files into PostgreSQL: we need transactions when an invoice and its lines are written together. Schema changes are goose migrations under db/migrations, one file per change, never edited once merged.",
		Facts: []PRFact{
			{Kind: "decision", Slug: "invoices-in-postgresql", Description: "Decision: invoices are stored in PostgreSQL", Fact: "Invoices and their lines live in PostgreSQL, written in one transaction.", Topic: "invoice-database", Keywords: []string{"database", "postgres", "storage", "sql"}},
			{Kind: "convention", Slug: "migrations-with-goose", Description: "Convention: schema changes are goose migrations", Fact: "Every schema change is a goose migration file under db/migrations; a merged migration is never edited.", Topic: "schema-migrations", Keywords: []string{"migration", "schema", "goose", "sql"}},
		}},
	{Source: "PR#102", Title: "Money as integer cents", Paths: []string{"internal/money/money.go", "web/src/api.ts"},
		Body: "Totals were off by a cent after summing float64 amounts. Amounts are now int64 cents everywhere. The web client parsed large totals as JS numbers and lost precision above 2^53, so the API sends cents as strings.",
		Facts: []PRFact{
			{Kind: "decision", Slug: "money-as-integer-cents", Description: "Decision: amounts are int64 cents, never floats", Fact: "Every amount is an int64 count of cents; float64 summing was off by a cent.", Topic: "money-representation", Keywords: []string{"money", "amount", "float", "total", "price"}},
			{Kind: "gotcha", Slug: "api-sends-cents-as-strings", Description: "Gotcha: the API sends cents as strings", Fact: "JavaScript numbers lose precision above 2^53, so the API encodes cents as JSON strings for the web client.", Topic: "money-json", Keywords: []string{"json", "javascript", "precision", "web", "client"}},
		}},
	{Source: "issue#103", Title: "ORM for the invoice queries?", Paths: nil,
		Body: "We tried GORM on the invoice queries for two weeks. It produced N+1 queries on invoice lines and silently wrote zero values for missing fields. Abandoned: queries stay plain SQL, generated with sqlc.",
		Facts: []PRFact{
			{Kind: "dead-end", Slug: "gorm-abandoned", Description: "Dead end: GORM was tried and abandoned", Fact: "GORM caused N+1 queries on invoice lines and silently wrote zero values; it was dropped.", Topic: "orm", Keywords: []string{"orm", "gorm", "queries"}},
			{Kind: "decision", Slug: "queries-with-sqlc", Description: "Decision: queries are plain SQL generated with sqlc", Fact: "Database queries are written in plain SQL and compiled to Go with sqlc.", Topic: "query-layer", Keywords: []string{"sql", "sqlc", "queries", "orm"}},
		}},
	{Source: "PR#104", Title: "CI: race detector and golangci-lint", Paths: []string{".github/workflows/ci.yml", ".golangci.yml"},
		Body: "CI runs go test -race on every package and golangci-lint with the config in .golangci.yml.",
		Facts: []PRFact{
			{Kind: "convention", Slug: "ci-tests-with-race", Description: "Convention: CI runs the tests with -race", Fact: "CI runs go test -race on every package; a data race fails the build.", Topic: "ci-tests", Keywords: []string{"ci", "test", "race", "workflow"}},
			{Kind: "convention", Slug: "lint-with-golangci", Description: "Convention: golangci-lint with .golangci.yml", Fact: "Every change passes golangci-lint configured in .golangci.yml.", Topic: "lint", Keywords: []string{"lint", "ci", "golangci"}},
		}},
	{Source: "PR#105", Title: "Keep sessions in process memory", Paths: []string{"internal/session/memory.go"},
		Body: "One instance for now: login sessions are kept in a map in process memory.",
		Facts: []PRFact{
			{Kind: "decision", Slug: "sessions-in-process-memory", Description: "Decision: login sessions live in process memory", Fact: "Login sessions are kept in an in-process map; there is one instance.", Topic: "session-store", Keywords: []string{"session", "login", "memory", "auth"}},
		}},
	{Source: "PR#106", Title: "Due dates off by one day", Paths: []string{"internal/invoice/due.go", "internal/cron/reminders.go"},
		Body: "Customers in UTC-8 saw due dates a day early. Due dates are computed in UTC and only shown in the customer's time zone; the reminder cron runs at UTC midnight.",
		Facts: []PRFact{
			{Kind: "gotcha", Slug: "due-dates-in-utc", Description: "Gotcha: compute due dates in UTC, show them in the customer's zone", Fact: "Due dates are computed in UTC and converted to the customer's time zone only for display; the reminder cron runs at UTC midnight.", Topic: "due-date-timezone", Keywords: []string{"timezone", "date", "due", "cron", "reminder", "overdue"}},
		}},
	{Source: "PR#107", Title: "Structured logs with zap", Paths: []string{"internal/log/log.go"},
		Body: "All logging goes through zap with structured fields; no fmt.Println.",
		Facts: []PRFact{
			{Kind: "convention", Slug: "logging-with-zap", Description: "Convention: log through zap with structured fields", Fact: "Code logs through zap with structured fields, never fmt.Println.", Topic: "logging-library", Keywords: []string{"log", "logging", "zap", "structured"}},
		}},
	{Source: "PR#108", Title: "Move sessions to Redis", Paths: []string{"internal/session/redis.go"},
		Body: "We now run three instances behind the load balancer and users were logged out when a request hit another one. Sessions move to Redis. Every session key gets a TTL, or Redis memory grows without bound.",
		Facts: []PRFact{
			{Kind: "decision", Slug: "sessions-in-redis", Description: "Decision: login sessions live in Redis", Fact: "Login sessions are stored in Redis, shared by the three instances.", Topic: "session-store", Keywords: []string{"session", "login", "redis", "auth"}, Retires: []string{"sessions-in-process-memory"}},
			{Kind: "gotcha", Slug: "redis-keys-need-ttl", Description: "Gotcha: every Redis key needs a TTL", Fact: "A Redis key without a TTL is never freed; session keys get a TTL.", Topic: "redis-ttl", Keywords: []string{"redis", "ttl", "expire", "memory", "session"}},
		}},
	{Source: "PR#109", Title: "Rate limit the public API with Redis", Paths: []string{"internal/api/ratelimit.go"},
		Body: "The public API is rate limited per token with a Redis counter, 100 requests a minute.",
		Facts: []PRFact{
			{Kind: "decision", Slug: "rate-limit-in-redis", Description: "Decision: rate limits are Redis counters per token", Fact: "The public API limits each token to 100 requests a minute with a Redis counter.", Topic: "rate-limiting", Keywords: []string{"rate", "limit", "throttle", "api", "redis"}},
		}},
	{Source: "issue#110", Title: "Flaky webhook tests", Paths: nil,
		Body: "The payment webhook tests fail about once in twenty runs: they compare against time.Now.",
		Facts: []PRFact{
			{Kind: "gotcha", Slug: "webhook-tests-time-now", Description: "Gotcha: webhook tests flake on time.Now", Fact: "The payment webhook tests flaked because they compared against time.Now.", Topic: "payment-tests", Keywords: []string{"flaky", "test", "webhook", "clock", "payment"}},
		}},
	{Source: "issue#110", Title: "Flaky webhook tests (follow-up)", Paths: nil,
		Body: "Fixed by injecting a clock: payment code takes a Clock, tests pass a fixed one. Reopened to note the rule.",
		Facts: []PRFact{
			// A second batch of the same issue: the scripted model wants it to
			// retire the first, its sibling; the pipeline must not let it.
			{Kind: "gotcha", Slug: "payment-code-takes-clock", Description: "Gotcha: payment code takes a Clock, tests a fixed one", Fact: "Payment code takes a Clock so tests pass a fixed time instead of time.Now.", Topic: "payment-tests", Keywords: []string{"flaky", "test", "clock", "time", "payment"}},
		}},
	{Source: "PR#111", Title: "Switch logging to log/slog", Paths: []string{"internal/log/log.go", "go.mod"},
		Body: "Go has log/slog in the standard library: zap is removed and every logger is a *slog.Logger.",
		Facts: []PRFact{
			{Kind: "convention", Slug: "logging-with-slog", Description: "Convention: log through log/slog", Fact: "Code logs through log/slog with structured attributes; zap was removed.", Topic: "logging-library", Keywords: []string{"log", "logging", "slog", "structured"}, Retires: []string{"logging-with-zap"}},
		}},
	{Source: "PR#112", Title: "Tax rates as decimal strings", Paths: []string{"internal/tax/rate.go"},
		Body: "Tax rates like 8.875% are not whole cents: they are stored as decimal strings and applied with big.Rat, rounding half-even to cents at the end.",
		Facts: []PRFact{
			{Kind: "decision", Slug: "tax-rates-as-decimals", Description: "Decision: tax rates are decimal strings applied with big.Rat", Fact: "Tax rates are stored as decimal strings and applied with big.Rat, rounded half-even to cents at the end.", Topic: "tax-rate-representation", Keywords: []string{"tax", "rate", "vat", "decimal", "rounding", "money"}},
		}},
	{Source: "PR#113", Title: "Migrations with Atlas", Paths: []string{"db/migrations/atlas.hcl"},
		Body: "goose cannot diff the schema. Schema changes are now Atlas migrations, planned from the desired schema in db/schema.sql.",
		Facts: []PRFact{
			{Kind: "convention", Slug: "migrations-with-atlas", Description: "Convention: schema changes are Atlas migrations", Fact: "Schema changes are Atlas migrations planned from db/schema.sql; goose is no longer used.", Topic: "schema-migrations", Keywords: []string{"migration", "schema", "atlas", "sql"}, Retires: []string{"migrations-with-goose"}},
		}},
	{Source: "PR#114", Title: "Sessions back in PostgreSQL", Paths: []string{"internal/session/postgres.go"},
		Body: "Redis failovers logged everyone out twice this quarter. Sessions now live in the sessions table of PostgreSQL; Redis stays for rate limits only. Sessions expire after 24 hours.",
		Facts: []PRFact{
			{Kind: "decision", Slug: "sessions-in-postgresql", Description: "Decision: login sessions live in PostgreSQL", Fact: "Login sessions are rows of the sessions table in PostgreSQL and expire after 24 hours; Redis is kept for rate limits only.", Topic: "session-store", Keywords: []string{"session", "login", "postgres", "auth", "expiry"}, Retires: []string{"sessions-in-redis"}},
			{Kind: "gotcha", Slug: "redis-failover-logouts", Description: "Gotcha: a Redis failover logged every user out", Fact: "Redis failovers dropped every session twice in one quarter.", Topic: "session-store", Keywords: []string{"redis", "failover", "logout", "session"}},
		}},
}

// PRQueries are new pull requests opening after the history.
var PRQueries = []PRQuery{
	{Title: "Session expiry banner", Body: "Show a banner when the login session is about to expire.", Paths: []string{"web/src/session_banner.ts", "internal/session/expiry.go"},
		Want: []string{"sessions-in-postgresql"}, Stale: []string{"sessions-in-process-memory", "sessions-in-redis"}},
	{Title: "Discount on invoices", Body: "A discount amount lowers the invoice total; the web client shows it.", Paths: []string{"internal/invoice/discount.go", "web/src/invoice.ts"},
		Want: []string{"money-as-integer-cents", "api-sends-cents-as-strings"}},
	{Title: "Use GORM for the reports", Body: "Reports need many joins; an ORM would save code.", Paths: []string{"internal/reports/orm.go"},
		Want: []string{"gorm-abandoned", "queries-with-sqlc"}},
	{Title: "Credit notes table", Body: "Adds the credit_notes table.", Paths: []string{"db/migrations/0042_credit_notes.sql"},
		Want: []string{"migrations-with-atlas"}, Stale: []string{"migrations-with-goose"}},
	{Title: "Log failed payments", Body: "Log every failed payment with its provider's error code.", Paths: []string{"internal/payment/charge.go"},
		Want: []string{"logging-with-slog"}, Stale: []string{"logging-with-zap"}},
	{Title: "Overdue reminder emails", Body: "A cron job emails a reminder the day after an invoice's due date.", Paths: []string{"internal/cron/overdue.go"},
		Want: []string{"due-dates-in-utc"}},
	{Title: "Throttle the export endpoint", Body: "Exports are expensive: limit them per token.", Paths: []string{"internal/api/export.go"},
		Want: []string{"rate-limit-in-redis"}},
	{Title: "VAT per country", Body: "Each country has its own VAT rate applied to the invoice total.", Paths: []string{"internal/tax/country.go"},
		Want: []string{"tax-rates-as-decimals", "money-as-integer-cents"}},
	{Title: "Refund webhook", Body: "Handle the payment provider's refund webhook, with tests.", Paths: []string{"internal/payment/webhook_refund.go", "internal/payment/webhook_refund_test.go"},
		Want: []string{"payment-code-takes-clock", "webhook-tests-time-now"}},
	{Title: "Faster CI", Body: "CI takes six minutes; cache the Go build and keep the race detector.", Paths: []string{".github/workflows/ci.yml"},
		Want: []string{"ci-tests-with-race"}},
	{Title: "Store sessions in Redis again?", Body: "Could login sessions go back to Redis for speed?", Paths: []string{"internal/session/store.go"},
		Want: []string{"sessions-in-postgresql", "redis-failover-logouts"}, Stale: []string{"sessions-in-redis", "sessions-in-process-memory"}},
	{Title: "Invoice lines query", Body: "Load an invoice with its lines in one query.", Paths: []string{"internal/store/invoice_lines.sql"},
		Want: []string{"queries-with-sqlc", "invoices-in-postgresql"}},
}
