package contactfile

import (
	"errors"
	"io"
	"slices"
)

// MaxSampleRows is how many data rows a preview shows.
const MaxSampleRows = 20

// ErrEmpty is a file without a single non-blank row.
var ErrEmpty = errors.New("the file has no rows")

// Preview is what an import preview shows of a file.
type Preview struct {
	// TotalRows counts the data rows (the header excluded).
	TotalRows int
	// Columns names the columns: the header's cells, or "Column N".
	Columns   []string
	HasHeader bool
	// SampleRows are the first data rows, each padded to len(Columns).
	SampleRows [][]string
	// Mapping is the suggested mapping, one entry per column.
	Mapping []Column
}

// ReadPreview reads every row of a file to count them and keeps the first ones to show. The column count is
// the widest row's, so a mapping built from the preview reaches every cell.
func ReadPreview(rows Rows) (Preview, error) {
	var head [][]string
	count, width := 0, 0
	for {
		cells, err := rows.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Preview{}, err
		}
		count++
		width = max(width, len(cells))
		if len(head) <= MaxSampleRows {
			head = append(head, slices.Clone(cells))
		}
	}
	if count == 0 {
		return Preview{}, ErrEmpty
	}
	var second, header []string
	if len(head) > 1 {
		second = head[1]
	}
	p := Preview{HasHeader: DetectHeader(head[0], second), TotalRows: count}
	samples := head
	if p.HasHeader {
		header, samples, p.TotalRows = head[0], head[1:], count-1
	}
	samples = samples[:min(len(samples), MaxSampleRows)]
	for i, s := range samples {
		for len(s) < width {
			s = append(s, "")
		}
		samples[i] = s
	}
	p.Columns = ColumnNames(header, width)
	p.SampleRows = samples
	p.Mapping = Suggest(p.Columns, p.HasHeader, samples)
	return p, nil
}
