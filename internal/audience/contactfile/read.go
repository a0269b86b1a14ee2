package contactfile

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Format names a file format an import accepts.
type Format string

// The accepted formats.
const (
	CSV  Format = "csv"
	XLSX Format = "xlsx"
)

// Limits of an import file.
const (
	// MaxFileBytes is the largest file an import reads.
	MaxFileBytes = 50 << 20
	// MaxRows is the most data rows (header excluded) a commit loads.
	MaxRows = 50_000
	// MaxUnzippedBytes caps what an XLSX workbook may unpack to: a 50 MB workbook of text unpacks to a few
	// hundred MB at most, a zip bomb to far more.
	MaxUnzippedBytes = 1 << 30
)

// Errors Open and Rows.Next return; callers map them to their API errors.
var (
	// ErrUnsupported is a file in a format imports do not read (a legacy .xls workbook, say).
	ErrUnsupported = errors.New("unsupported file format")
	// ErrUnreadable is a file that claims a supported format but cannot be parsed.
	ErrUnreadable = errors.New("unreadable file")
)

// Rows yields a file's rows in order. The cells of a row are valid UTF-8 without NUL characters (which
// Postgres text refuses) and are not trimmed.
type Rows interface {
	// Next returns the next non-blank row, or io.EOF after the last one. The slice may be reused by the
	// next call; copy it to keep it.
	Next() ([]string, error)
	// Line is where the row Next returned last starts: the 1-based line of a CSV file (a quoted cell may
	// span lines) or the 1-based sheet row of a workbook.
	Line() int
	// Close releases what the reader holds (an XLSX workbook's temporary files).
	Close() error
}

// peekSize is how much of a file is looked at to tell its format, encoding and delimiter.
const peekSize = 64 << 10

var (
	zipMagic = []byte("PK\x03\x04")
	// oleMagic starts legacy Office files (.xls) and encrypted workbooks.
	oleMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}
)

// Open tells the format of the file r holds from its content and returns a reader of its rows. An empty
// reader is a CSV file without rows.
func Open(r io.Reader) (Rows, Format, error) {
	br := bufio.NewReaderSize(r, peekSize)
	head, err := br.Peek(len(oleMagic))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, "", err
	}
	switch {
	case bytes.HasPrefix(head, zipMagic):
		rows, err := openXLSX(br)
		return rows, XLSX, err
	case bytes.HasPrefix(head, oleMagic):
		return nil, "", fmt.Errorf("%w: legacy or encrypted Excel workbook; save it as .xlsx or CSV", ErrUnsupported)
	}
	rows, err := openCSV(br)
	return rows, CSV, err
}

// openCSV sets up a CSV reader after looking at the file's start for a byte-order mark, its encoding and its
// delimiter.
func openCSV(br *bufio.Reader) (Rows, error) {
	head, err := br.Peek(peekSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	var src io.Reader = br
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		_, _ = br.Discard(3)
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		// UTF-16 with its BOM: what spreadsheets save as "Unicode text".
		src = transform.NewReader(br, unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder())
	case bytes.IndexByte(head, 0) >= 0:
		return nil, fmt.Errorf("%w: not a text file", ErrUnreadable)
	case !validUTF8Prefix(head):
		src = transform.NewReader(br, charmap.Windows1252.NewDecoder())
	}
	text := bufio.NewReaderSize(src, peekSize)
	first, err := text.Peek(peekSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	r := csv.NewReader(text)
	r.Comma = delimiter(first)
	r.FieldsPerRecord = -1 // ragged rows are common; missing cells read as empty
	r.LazyQuotes = true    // so are stray quotes inside unquoted cells
	r.ReuseRecord = true
	return &csvRows{r: r}, nil
}

// validUTF8Prefix reports whether b is UTF-8, allowing b to end in the middle of a character (it is a
// prefix of the file).
func validUTF8Prefix(b []byte) bool {
	if utf8.Valid(b) {
		return true
	}
	// The peek may cut the last character: allow an incomplete tail of at most UTFMax-1 bytes.
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			return !utf8.FullRune(b[len(b)-i:]) && utf8.Valid(b[:len(b)-i])
		}
	}
	return false
}

// delimiter picks the comma, semicolon or tab that the first line uses most outside quotes (comma on a tie or
// when none appears).
func delimiter(head []byte) rune {
	counts := map[byte]int{}
	quoted := false
	for _, c := range head {
		if c == '"' {
			quoted = !quoted
			continue
		}
		if quoted {
			continue
		}
		if c == '\n' {
			break
		}
		if c == ',' || c == ';' || c == '\t' {
			counts[c]++
		}
	}
	best := byte(',')
	for _, c := range []byte{';', '\t'} {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return rune(best)
}

type csvRows struct {
	r    *csv.Reader
	line int
}

func (c *csvRows) Next() ([]string, error) {
	for {
		rec, err := c.r.Read()
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%w: line %d: %v", ErrUnreadable, pe.StartLine, pe.Err)
			}
			return nil, err
		}
		c.line, _ = c.r.FieldPos(0)
		if !blank(rec) {
			clean(rec)
			return rec, nil
		}
	}
}

func (c *csvRows) Line() int { return c.line }

func (c *csvRows) Close() error { return nil }

// openXLSX opens the workbook and iterates its active sheet.
func openXLSX(r io.Reader) (Rows, error) {
	f, err := excelize.OpenReader(r, excelize.Options{UnzipSizeLimit: MaxUnzippedBytes})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	sheet := f.GetSheetName(f.GetActiveSheetIndex())
	if sheet == "" {
		if list := f.GetSheetList(); len(list) > 0 {
			sheet = list[0]
		}
	}
	rows, err := f.Rows(sheet)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	return &xlsxRows{f: f, rows: rows}, nil
}

type xlsxRows struct {
	f    *excelize.File
	rows *excelize.Rows
	line int
}

func (x *xlsxRows) Next() ([]string, error) {
	for x.rows.Next() {
		x.line++ // the iterator yields every row number, empty ones included
		cells, err := x.rows.Columns()
		if err != nil {
			return nil, fmt.Errorf("%w: row %d: %v", ErrUnreadable, x.line, err)
		}
		if !blank(cells) {
			clean(cells)
			return cells, nil
		}
	}
	if err := x.rows.Error(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	return nil, io.EOF
}

func (x *xlsxRows) Line() int { return x.line }

func (x *xlsxRows) Close() error {
	return errors.Join(x.rows.Close(), x.f.Close())
}

func blank(cells []string) bool {
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// clean makes every cell valid UTF-8 without NUL characters, in place.
func clean(cells []string) {
	for i, c := range cells {
		if !utf8.ValidString(c) {
			c = strings.ToValidUTF8(c, "\uFFFD")
		}
		if strings.IndexByte(c, 0) >= 0 {
			c = strings.ReplaceAll(c, "\x00", "")
		}
		cells[i] = c
	}
}
