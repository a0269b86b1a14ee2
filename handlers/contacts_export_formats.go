package handlers

import (
	"archive/zip"
	"bufio"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// exportEncoder writes one format. row's values are a string, bool, int or nil (blank); it must not keep vals.
// flush ends a batch, finish the file; close releases what the encoder holds, finished or not.
type exportEncoder interface {
	header(names []string) error
	row(vals []any) error
	flush() error
	finish() error
	close()
}

// newExportEncoder writes to w (buffered; the caller flushes it after each batch). The XLSX encoder writes its
// archive straight to out at finish.
func newExportEncoder(format api.ContactExportRequestFormat, w *bufio.Writer, out io.Writer) (exportEncoder, error) {
	switch format {
	case api.ContactExportRequestFormatCsv:
		return &csvExport{w: csv.NewWriter(w)}, nil
	case api.ContactExportRequestFormatJSON:
		return &jsonExport{w: w, enc: json.NewEncoder(w)}, nil
	case api.ContactExportRequestFormatXlsx:
		return newXLSXExport(w)
	}
	return nil, apierror.BadRequest("invalid_format", "format must be csv, xlsx or json.")
}

// csvExport writes RFC 4180 CSV with a header row. A text cell that starts with =, +, -, @, a tab or a carriage
// return gets a leading single quote, so a spreadsheet opening the file shows it as text instead of running it
// as a formula (CSV injection); this also applies to phone numbers such as +1 555 0100. XLSX cells are typed
// text and JSON values are data, so neither needs it.
type csvExport struct {
	w   *csv.Writer
	rec []string
}

func (e *csvExport) header(names []string) error {
	e.rec = make([]string, len(names))
	return e.w.Write(names)
}

func (e *csvExport) row(vals []any) error {
	for i, v := range vals {
		switch v := v.(type) {
		case string:
			e.rec[i] = csvSafe(v)
		case bool:
			e.rec[i] = strconv.FormatBool(v)
		case int:
			e.rec[i] = strconv.Itoa(v)
		default:
			e.rec[i] = ""
		}
	}
	return e.w.Write(e.rec)
}

// csvSafe defuses a cell a spreadsheet would read as a formula.
func csvSafe(s string) string {
	if s != "" && strings.IndexByte("=+-@\t\r", s[0]) >= 0 {
		return "'" + s
	}
	return s
}

func (e *csvExport) flush() error {
	e.w.Flush()
	return e.w.Error()
}

func (e *csvExport) finish() error { return e.flush() }

func (e *csvExport) close() {}

// jsonExport writes a top-level array of objects whose keys are the column identifiers in order; values keep
// their type (strings, booleans, numbers) and blanks are null. Each element is encoded on its own.
type jsonExport struct {
	w     *bufio.Writer
	enc   *json.Encoder
	keys  []json.RawMessage
	count int
}

func (e *jsonExport) header(names []string) error {
	e.keys = make([]json.RawMessage, len(names))
	for i, n := range names {
		k, err := json.Marshal(n)
		if err != nil {
			return err
		}
		e.keys[i] = k
	}
	_, err := e.w.WriteString("[")
	return err
}

func (e *jsonExport) row(vals []any) error {
	if e.count > 0 {
		if _, err := e.w.WriteString(","); err != nil {
			return err
		}
	}
	e.count++
	return e.enc.Encode(jsonRecord{keys: e.keys, vals: vals})
}

func (e *jsonExport) flush() error { return nil }

func (e *jsonExport) finish() error {
	_, err := e.w.WriteString("]\n")
	return err
}

func (e *jsonExport) close() {}

// jsonRecord is one exported contact as a JSON object with its keys in column order.
type jsonRecord struct {
	keys []json.RawMessage
	vals []any
}

// MarshalJSON writes the object with its keys in column order (a map would sort them).
func (r jsonRecord) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, k := range r.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(b, k...), ':')
		v, err := json.Marshal(r.vals[i])
		if err != nil {
			return nil, err
		}
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

// xlsxExport writes one sheet through excelize's StreamWriter, which keeps the sheet's XML in memory up to
// 16 MB and spools the rest to a temporary file (removed by close); a workbook is a ZIP archive whose
// directory comes last, so the file goes out only when every row is in. At finish the archive is deflated
// straight into the response instead of the byte buffer excelize would build (SetZipWriter), so the file is
// never whole in memory.
type xlsxExport struct {
	out  *bufio.Writer
	file *excelize.File
	sw   *excelize.StreamWriter
	bold int
	next int
}

const xlsxSheet = "Contacts"

func newXLSXExport(out *bufio.Writer) (*xlsxExport, error) {
	f := excelize.NewFile()
	if err := f.SetSheetName("Sheet1", xlsxSheet); err != nil {
		_ = f.Close()
		return nil, err
	}
	bold, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	sw, err := f.NewStreamWriter(xlsxSheet)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return &xlsxExport{out: out, file: f, sw: sw, bold: bold, next: 1}, nil
}

func (e *xlsxExport) header(names []string) error {
	vals := make([]any, len(names))
	for i, n := range names {
		vals[i] = n
	}
	if err := e.sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	return e.setRow(vals, excelize.RowOpts{StyleID: e.bold})
}

func (e *xlsxExport) row(vals []any) error { return e.setRow(vals) }

func (e *xlsxExport) setRow(vals []any, opts ...excelize.RowOpts) error {
	cell, err := excelize.CoordinatesToCellName(1, e.next)
	if err != nil {
		return err
	}
	e.next++
	return e.sw.SetRow(cell, vals, opts...)
}

func (e *xlsxExport) flush() error { return nil }

func (e *xlsxExport) finish() error {
	if err := e.sw.Flush(); err != nil {
		return err
	}
	// WriteTo zips into a buffer it then copies out; the zip writer below ignores that buffer and deflates
	// into the response instead, so the buffer stays empty.
	e.file.SetZipWriter(func(io.Writer) excelize.ZipWriter { return zip.NewWriter(e.out) })
	return e.file.Write(io.Discard)
}

func (e *xlsxExport) close() { _ = e.file.Close() }
