package handlers_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
)

// importBenchRows is the size of the benchmark's file: the most rows one import takes.
const importBenchRows = 50_000

// importBenchData generates the benchmark's contacts: address, first and last name, company, phone.
func importBenchData() [][]string {
	rows := make([][]string, importBenchRows)
	for i := range rows {
		rows[i] = []string{fmt.Sprintf("Person.%d@Company%d.example", i, i%997), fmt.Sprintf("First%d", i),
			fmt.Sprintf("Last%d", i), fmt.Sprintf("Company %d", i%997), fmt.Sprintf("+1 555 %07d", i)}
	}
	return rows
}

// BenchmarkContactImport compares importing a generated 50,000-row CSV file through the API (multipart
// upload, parsing, per-row checks, staging COPY, the insert into contacts, audit, index job) with a raw COPY
// of the same file (COPY ... FROM STDIN, FORMAT csv) into a plain unindexed 5-column table. Each outflow
// iteration imports into a fresh organization, so every row is new and the insert takes the path of a first
// import (no per-row check against existing addresses). The contacts table is emptied between iterations, as
// the baseline's table is, so every iteration starts from the same table size.
func BenchmarkContactImport(b *testing.B) {
	env := apitest.New(b)
	ctx := context.Background()
	data := importBenchData()
	var file bytes.Buffer
	w := csv.NewWriter(&file)
	_ = w.Write([]string{"Email", "First Name", "Last Name", "Company", "Phone"})
	_ = w.WriteAll(data)
	opts := impOpts{Mapping: impCols("email", "first_name", "last_name", "company", "phone"), Dedup: "skip", HasHeader: true}.String()

	owner, err := pgx.Connect(ctx, env.DB.URL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = owner.Close(ctx) })
	if _, err := owner.Exec(ctx, `CREATE TABLE import_baseline (email text, first_name text, last_name text, company text, phone text)`); err != nil {
		b.Fatal(err)
	}

	baseline := func(b *testing.B) {
		tag, err := owner.PgConn().CopyFrom(ctx, bytes.NewReader(file.Bytes()),
			`COPY import_baseline (email, first_name, last_name, company, phone) FROM STDIN (FORMAT csv, HEADER true)`)
		if err != nil || tag.RowsAffected() != importBenchRows {
			b.Fatal(tag, err)
		}
	}
	i := 0 // every org must be new
	outflow := func(b *testing.B) {
		i++
		boot := env.Bootstrap(b, fmt.Sprintf("bench%d", i))
		c := env.Client(b, boot.APIKey)
		b.StartTimer()
		res, err := c.ContactsImportCommit(ctx, &api.ContactsImportCommitReq{File: impFile("contacts.csv", file.Bytes()), Options: opts},
			api.ContactsImportCommitParams{})
		b.StopTimer()
		if ok, _ := res.(*api.ContactsImportCommitOK); err != nil || ok == nil || ok.Imported != importBenchRows {
			b.Fatal(res, err)
		}
	}
	empty := func(b *testing.B, table string) {
		if _, err := owner.Exec(ctx, `TRUNCATE `+table+` CASCADE`); err != nil {
			b.Fatal(err)
		}
	}
	// One untimed round of each first, as a running server has had: connections open, statements
	// prepared, functions compiled.
	baseline(b)
	empty(b, "import_baseline")
	b.StopTimer()
	outflow(b)
	empty(b, "contacts")
	b.StartTimer()

	b.Run("baseline", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			empty(b, "import_baseline")
			b.StartTimer()
			baseline(b)
		}
	})
	b.Run("outflow", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			outflow(b)
			empty(b, "contacts")
			b.StartTimer()
		}
	})
}
