package handlers_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// seedMillion fills org with n generated contacts (ids UUIDv7 whose time is created_at, as the API writes
// them): first names from a list, 10,000 last names, 20,000 companies, custom fields industry (50 values)
// and territory (1,000 values).
func seedMillion(b *testing.B, env *apitest.Env, org uuid.UUID, n int) {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	const chunk = 100000
	for from := 0; from < n; from += chunk {
		err := db.WithOrgTx(ctx, env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO contacts (organization_id, id, email, first_name, last_name, company, custom_fields, created_at)
SELECT $1, encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) placing substring(int8send((extract(epoch from t) * 1000)::bigint) from 3) from 1 for 6), 52, 1), 53, 1), 'hex')::uuid,
  f || '.smith' || (g % 10000) || '.' || g || '@example' || (g % 1000) || '.com', f, 'Smith' || (g % 10000), 'Company ' || (g % 20000),
  jsonb_build_object('industry', 'industry' || (g % 50), 'territory', 'T' || (g % 1000)), date_trunc('milliseconds', t)
FROM (SELECT g, (ARRAY['john','mary','alex','sam','lee','kim','pat','chris','dana','robin'])[1 + g % 10] AS f,
  now() - interval '1 ms' * ($3::int - g) AS t FROM generate_series($2::int, $2::int + $4::int - 1) g) s`, org, from, n, min(chunk, n-from))
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	// As autovacuum would after a load this size (the app role may not VACUUM: it does not own the table).
	if _, err := env.DB.OwnerPool(b).Exec(ctx, `VACUUM ANALYZE contacts`); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d contacts in %s", n, time.Since(start).Round(time.Millisecond))
}

// BenchmarkContactSearch measures POST /v1/contacts/search (first page: rows, filtered total and org-wide
// counts) over an organization of 1,000,000 contacts, for a text query and for a custom-field filter, next to
// the same SQL statements run directly over pgx. Each sub-benchmark reports its p95 in ms; the issue's
// target is outflow p95 within 1.5x + 5 ms of the SQL's and under 100 ms.
func BenchmarkContactSearch(b *testing.B) {
	env := apitest.New(b)
	boot := env.Bootstrap(b, "acme")
	org := boot.OrganizationID
	seedMillion(b, env, org, 1_000_000)
	c := env.Client(b, boot.APIKey)
	ctx := context.Background()

	// Each case is the API body and the same search as the contacts package's input, for the direct SQL.
	cases := []struct {
		name string
		body api.ContactSearchRequest
		in   contacts.SearchInput
	}{
		{"text", api.ContactSearchRequest{Query: api.NewOptString("smith4242")}, contacts.SearchInput{Query: "smith4242"}},
		{"custom_field", api.ContactSearchRequest{CustomFieldFilters: []api.ContactCustomFieldFilter{{Name: "territory", Value: "t417", Type: "equal"}}},
			contacts.SearchInput{Custom: []contacts.CustomFilter{{Name: "territory", Value: "t417", Type: "equal"}}}},
	}
	for _, tc := range cases {
		f, err := contacts.ParseSearch(tc.in)
		if err != nil {
			b.Fatal(err)
		}
		// The statements the handler runs for a first page, run directly.
		direct := func(b *testing.B) int {
			var rows int
			err := db.WithOrgTx(ctx, env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
				f, err := contacts.Resolve(ctx, tx, f)
				if err != nil {
					return err
				}
				sql, args, err := contacts.SearchSQL(ctx, tx, org, f, nil, 51)
				if err != nil {
					return err
				}
				r, err := tx.Query(ctx, sql, args...)
				if err != nil {
					return err
				}
				for r.Next() {
					rows++
				}
				r.Close()
				if _, err := contacts.Count(ctx, tx, org, f); err != nil {
					return err
				}
				var total int64
				return tx.QueryRow(ctx, `SELECT total FROM contact_stats WHERE organization_id = $1`, org).Scan(&total)
			})
			if err != nil {
				b.Fatal(err)
			}
			return rows
		}
		via := func(b *testing.B) int {
			page, err := c.ContactsSearch(ctx, api.NewOptContactSearchRequest(tc.body), api.ContactsSearchParams{})
			if err != nil {
				b.Fatal(err)
			}
			return len(page.Data)
		}
		if n, m := direct(b), via(b); n != m+1 && n != m || m == 0 {
			b.Fatalf("%s: direct SQL found %d rows, the API %d", tc.name, n, m)
		}
		for _, run := range []struct {
			leaf string
			fn   func(*testing.B) int
		}{{"baseline", direct}, {"outflow", via}} {
			b.Run(tc.name+"/"+run.leaf, func(b *testing.B) {
				var took []time.Duration
				for b.Loop() {
					t0 := time.Now()
					run.fn(b)
					took = append(took, time.Since(t0))
				}
				slices.Sort(took)
				p95 := took[(len(took)*95)/100]
				b.ReportMetric(float64(p95.Microseconds())/1000, "p95-ms")
			})
		}
	}
}

// BenchmarkContactSearchAfterImport measures POST /v1/contacts/search over the window that follows a 50,000-row
// import (the "minute after": a user who imports and then looks) against the same search once the rows
// are indexed. Two organizations import the same generated file through the API: "settled" is then indexed by
// the index job and VACUUM ANALYZEd (what autovacuum eventually does) and is the baseline; "fresh" is searched
// in the two phases of its window:
//
//   - pending: right after the import commits, before the index job has run (the rows are found through
//     contact_index_pending);
//   - indexed: after the index job has run (called here as River would call it), before autovacuum has visited
//     the table; autovacuum is off for the table during the run, so it cannot help by chance.
//
// Each phase/case group runs its baseline and its outflow back to back, so both see the same machine load; each
// reports its p95 in ms, and outflow also reports its p95 as a multiple of the baseline's (p95-x). The issue's
// target is outflow's p95 within 100 ms in both phases.
func BenchmarkContactSearchAfterImport(b *testing.B) {
	env := apitest.New(b)
	ctx := context.Background()
	var file bytes.Buffer
	w := csv.NewWriter(&file)
	_ = w.Write([]string{"Email", "First Name", "Last Name", "Company", "Phone", "Territory"})
	for i, r := range importBenchData() {
		_ = w.Write(append(r, fmt.Sprintf("T%d", i%1000)))
	}
	w.Flush()
	opts := impOpts{Mapping: impCols("email", "first_name", "last_name", "company", "phone", "custom:territory"), Dedup: "skip",
		HasHeader: true}.String()
	owner := env.DB.OwnerPool(b)
	type org struct {
		id uuid.UUID
		c  *api.Client
	}
	load := func(name string) org {
		boot := env.Bootstrap(b, name)
		c := env.Client(b, boot.APIKey)
		res, err := c.ContactsImportCommit(ctx, &api.ContactsImportCommitReq{File: impFile("contacts.csv", file.Bytes()), Options: opts},
			api.ContactsImportCommitParams{})
		if err != nil {
			b.Fatal(err)
		}
		if imported := importedOK(b, res); imported.Imported != importBenchRows {
			b.Fatal(imported)
		}
		return org{boot.OrganizationID, c}
	}
	index := func(o org) {
		w := &contacts.IndexWorker{Pool: env.DB.Pool}
		if err := w.Work(ctx, &river.Job[contacts.IndexArgs]{Args: contacts.IndexArgs{OrganizationID: o.id}}); err != nil {
			b.Fatal(err)
		}
	}
	settled := load("settled")
	index(settled)
	for _, sql := range []string{`VACUUM ANALYZE contacts`, `ALTER TABLE contacts SET (autovacuum_enabled = false)`} {
		if _, err := owner.Exec(ctx, sql); err != nil {
			b.Fatal(err)
		}
	}
	fresh := load("fresh")

	cases := []struct {
		name  string
		body  api.ContactSearchRequest
		found int
	}{
		{"list", api.ContactSearchRequest{}, 50},
		{"text", api.ContactSearchRequest{Query: api.NewOptString("last4242")}, 11},
		{"custom_field", api.ContactSearchRequest{CustomFieldFilters: []api.ContactCustomFieldFilter{{Name: "territory", Value: "t417", Type: "equal"}}}, 50},
	}
	phase := func(name string) {
		for _, tc := range cases {
			var base time.Duration
			for _, run := range []struct {
				leaf string
				o    org
			}{{"baseline", settled}, {"outflow", fresh}} {
				b.Run(name+"/"+tc.name+"/"+run.leaf, func(b *testing.B) {
					var took []time.Duration
					for b.Loop() {
						t0 := time.Now()
						page, err := run.o.c.ContactsSearch(ctx, api.NewOptContactSearchRequest(tc.body), api.ContactsSearchParams{})
						took = append(took, time.Since(t0))
						if err != nil {
							b.Fatal(err)
						}
						if len(page.Data) != tc.found {
							b.Fatalf("found %d contacts, want %d", len(page.Data), tc.found)
						}
					}
					slices.Sort(took)
					p95 := took[(len(took)*95)/100]
					b.ReportMetric(float64(p95.Microseconds())/1000, "p95-ms")
					if run.leaf == "baseline" {
						base = p95
					} else {
						b.ReportMetric(float64(p95)/float64(base), "p95-x")
					}
				})
			}
		}
	}
	phase("pending")
	index(fresh)
	phase("indexed")
}
