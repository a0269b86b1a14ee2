package handlers_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xuri/excelize/v2"

	"github.com/outflowhq/outflow/cmd/outflow/app"
	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
)

func TestContactImportPreviewCSV(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)

	// A BOM, semicolons, another verifier's output column, a header with no key to derive.
	var b strings.Builder
	b.WriteString("\xEF\xBB\xBFE-mail;First Name;Surname;Organisation;Job Title;ZB Status;Subscribed;Tags;$$$\n")
	statuses := []string{"valid", "catch-all", "do_not_mail", "invalid"}
	for i := range 25 {
		fmt.Fprintf(&b, "user%d@example.com;First%d;Last%d;Acme;Engineer;%s;yes;\"vip, beta\";x\n", i, i, i, statuses[i%4])
	}
	b.WriteString(";;;;;;;;\n\n") // trailing blank rows are not rows
	p := impPreview(t, c, "leads.csv", []byte(b.String()))
	require.Equal(t, "leads.csv", p.Filename)
	require.Equal(t, "csv", p.Format)
	require.Equal(t, 25, p.TotalRows)
	require.True(t, p.HasHeader)
	require.Equal(t, []string{"E-mail", "First Name", "Surname", "Organisation", "Job Title", "ZB Status", "Subscribed", "Tags", "$$$"}, p.Columns)
	require.Len(t, p.SampleRows, 20)
	require.Equal(t, []string{"user0@example.com", "First0", "Last0", "Acme", "Engineer", "valid", "yes", "vip, beta", "x"}, p.SampleRows[0])
	require.Equal(t, []string{"email", "first_name", "last_name", "company", "custom:Job Title", "verification_status", "subscribed", "categories", "ignore"},
		impTargets(p.SuggestedMapping))

	// Tabs, no header: columns are numbered, the email column is found by its values, the rest is ignored.
	p = impPreview(t, c, "plain.tsv", []byte("Ada\tada@example.com\tx\nBob\tbob@example.com\n"))
	require.False(t, p.HasHeader)
	require.Equal(t, 2, p.TotalRows)
	require.Equal(t, []string{"Column 1", "Column 2", "Column 3"}, p.Columns)
	require.Equal(t, [][]string{{"Ada", "ada@example.com", "x"}, {"Bob", "bob@example.com", ""}}, p.SampleRows, "short rows are padded")
	require.Equal(t, []string{"ignore", "email", "ignore"}, impTargets(p.SuggestedMapping))

	// A header is told by its words when no row holds an address yet.
	p = impPreview(t, c, "h.csv", []byte("Email,Name\n"))
	require.True(t, p.HasHeader)
	require.Equal(t, 0, p.TotalRows)
	require.Empty(t, p.SampleRows)

	// Windows-1252, as spreadsheets save CSV in much of the world.
	p = impPreview(t, c, "latin.csv", []byte("email,first name\njose@example.com,Jos\xe9\n"))
	require.Equal(t, []string{"jose@example.com", "José"}, p.SampleRows[0])

	// UTF-16 "Unicode text" with its BOM, tab-separated.
	utf16 := []byte{0xFF, 0xFE}
	for _, r := range "email\tfirst name\r\nzoe@example.com\tZoë\r\n" {
		utf16 = append(utf16, byte(r), byte(r>>8))
	}
	p = impPreview(t, c, "unicode.txt", utf16)
	require.Equal(t, []string{"email", "first name"}, p.Columns)
	require.Equal(t, [][]string{{"zoe@example.com", "Zoë"}}, p.SampleRows)
	require.Equal(t, []string{"email", "first_name"}, impTargets(p.SuggestedMapping))
}

// xlsxFile builds a workbook whose first sheet holds rows from A1 down (nil rows are left empty).
func xlsxFile(t *testing.T, rows [][]any) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	for i, r := range rows {
		if r == nil {
			continue
		}
		cell, err := excelize.CoordinatesToCellName(1, i+1)
		require.NoError(t, err)
		require.NoError(t, f.SetSheetRow("Sheet1", cell, &r))
	}
	buf, err := f.WriteToBuffer()
	require.NoError(t, err)
	return buf.Bytes()
}

func TestContactImportXLSX(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	data := xlsxFile(t, [][]any{
		{"Email Address", "Given Name", "Mobile", "Plan"},
		{"ada@example.com", "Ada", 4155550123, "pro"},
		{"bob@example.com", "Bob", "", "free"},
		nil, // an empty sheet row is not a row, but it keeps its number
		{"not an address", "Eve"},
	})
	p := impPreview(t, c, "book.xlsx", data)
	require.Equal(t, "xlsx", p.Format)
	require.Equal(t, 3, p.TotalRows)
	require.True(t, p.HasHeader)
	require.Equal(t, []string{"Email Address", "Given Name", "Mobile", "Plan"}, p.Columns)
	require.Equal(t, []string{"ada@example.com", "Ada", "4155550123", "pro"}, p.SampleRows[0])
	require.Equal(t, []string{"not an address", "Eve", "", ""}, p.SampleRows[2])
	require.Equal(t, []string{"email", "first_name", "phone", "custom:Plan"}, impTargets(p.SuggestedMapping))

	ans, err := c.ContactsImportCommit(context.Background(), &api.ContactsImportCommitReq{File: impFile("book.xlsx", data),
		Options: impOpts{Mapping: impCols("email", "first_name", "phone", "custom:Plan"), Dedup: "skip", HasHeader: true}.String()},
		api.ContactsImportCommitParams{})
	require.NoError(t, err)
	res := importedOK(t, ans)
	requireImportSums(t, res)
	require.Equal(t, 2, res.Imported)
	require.Equal(t, 1, res.Failed)
	require.Equal(t, []string{"5 not an address: not a valid email address"}, impReasons(res), "lines are sheet rows")
	require.Equal(t, []string{"not an address", "Eve"}, res.Errors[0].Values)
	ada := impOne(t, env, boot.OrganizationID, "ada@example.com")
	require.Equal(t, "4155550123", ada.Phone)
	require.Equal(t, map[string]string{"Plan": "pro"}, ada.Custom)
}

func TestContactImportFileErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	ctx := context.Background()
	opts := impOpts{Mapping: impCols("email"), Dedup: "skip", HasHeader: false}.String()
	for _, tc := range []struct{ name, data, code string }{
		{"empty", "", "empty_file"},
		{"blank rows only", ",,,\n\n , ,\n", "empty_file"},
		{"legacy workbook", "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1rest of an xls", "unsupported_format"},
		{"broken zip", "PK\x03\x04 not really a workbook", "unreadable_file"},
		{"binary", "email\x00\x01\x02", "unreadable_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.ContactsImportPreview(ctx, &api.ContactsImportPreviewReq{File: impFile(tc.name, []byte(tc.data))})
			requireAPIError(t, err, http.StatusBadRequest, tc.code)
			_, err = impCommit(c, tc.name, tc.data, opts)
			requireAPIError(t, err, http.StatusBadRequest, tc.code)
		})
	}
	// A header and nothing else has no rows to import.
	_, err := impCommit(c, "h.csv", "email\n", impOpts{Mapping: impCols("email"), Dedup: "skip", HasHeader: true}.String())
	requireAPIError(t, err, http.StatusBadRequest, "empty_file")

}

// TestContactImportFileTooLarge checks both caps: the import routes take bodies up to app.ImportBodyBytes
// (beyond, the server answers 413 before the handler), and the handler refuses files over 50 MB.
func TestContactImportFileTooLarge(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	data := bytes.Repeat([]byte("a"), app.ImportBodyBytes+1)
	_, err := c.ContactsImportPreview(context.Background(), &api.ContactsImportPreviewReq{File: impFile("huge.csv", data)})
	requireAPIError(t, err, http.StatusRequestEntityTooLarge, "request_too_large")
	_, err = impCommit(c, "huge.csv", string(data[:50<<20+1]), impOpts{Mapping: impCols("email"), Dedup: "skip"}.String())
	requireAPIError(t, err, http.StatusBadRequest, "file_too_large")
	_, err = c.ContactsImportPreview(context.Background(), &api.ContactsImportPreviewReq{File: impFile("huge.csv", data[:50<<20+1])})
	requireAPIError(t, err, http.StatusBadRequest, "file_too_large")
}
