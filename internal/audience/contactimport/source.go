package contactimport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/audience/contactfile"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// source feeds COPY: a reader goroutine (read) parses the file's data rows through the importer and
// hands the accepted ones over in batches, and Read encodes them as staging rows in COPY's binary format
// (see copy.go). Parsing, encoding and Postgres's loading run at the same time, and parsing
// starts while the transaction is still being set up.
type source struct {
	rows contactfile.Rows
	im   *contactfile.Importer
	plan plan
	// at is the verification_checked_at of imported verdicts.
	at  time.Time
	ids *contacts.IDs

	// Owned by the reader goroutine until it closes batches.
	first     []string // the first data row, read by start
	firstLine int
	data      int   // data rows read
	readErr   error // why reading stopped early (too many rows, an unreadable row)

	batches  chan []contactfile.Contact
	quit     chan struct{} // closed by stop: the reader gives up
	stopOnce sync.Once
	finished sync.WaitGroup

	// Owned by Read.
	batch  []contactfile.Contact // the rest of the batch being encoded
	staged int                   // rows handed to COPY
	// lo and hi bound the ids of the staged rows (contact_index_pending records them for the new ones).
	lo, hi uuid.UUID
	// buf holds encoded rows not yet read; pending is its unread part.
	buf, pending []byte
	done         bool
	err          error
}

// readBatch is how many accepted rows the reader hands over at a time, and readAhead how many batches it
// may be ahead of the encoder.
const (
	readBatch = 256
	readAhead = 8
)

// copyChunk is how much encoded data Read prepares at a time.
const copyChunk = 64 << 10

// start reads the header (when the file has one) and the first data row, so an empty file is refused before
// the transaction begins, and then starts the reader goroutine; the caller must stop it.
func (s *source) start(hasHeader bool) error {
	cells, err := s.rows.Next()
	if hasHeader && err == nil {
		cells, err = s.rows.Next()
	}
	if errors.Is(err, io.EOF) {
		return apierror.BadRequest("empty_file", "The file has no data rows.")
	}
	if err != nil {
		return FileError(err)
	}
	s.first, s.firstLine = cells, s.rows.Line()
	s.batches, s.quit = make(chan []contactfile.Contact, readAhead), make(chan struct{})
	s.finished.Go(s.read)
	return nil
}

// stop makes the reader goroutine give up (when COPY ended early) and waits for it. After stop, the
// importer's report and readErr may be read.
func (s *source) stop() {
	s.stopOnce.Do(func() { close(s.quit) })
	s.finished.Wait()
}

// read is the reader goroutine: it parses rows until the file ends, reading fails or stop is called, and
// closes batches when done.
func (s *source) read() {
	defer close(s.batches)
	batch := make([]contactfile.Contact, 0, readBatch)
	for {
		c, ok := s.nextContact()
		if ok {
			batch = append(batch, c)
		}
		if len(batch) == readBatch || !ok && len(batch) > 0 {
			select {
			case s.batches <- batch:
			case <-s.quit:
				return
			}
			batch = make([]contactfile.Contact, 0, readBatch)
		}
		if !ok {
			return
		}
	}
}

func (s *source) next() ([]string, int, bool) {
	if s.first != nil {
		cells := s.first
		s.first = nil
		return cells, s.firstLine, true
	}
	cells, err := s.rows.Next()
	if err != nil {
		if !errors.Is(err, io.EOF) {
			s.readErr = FileError(err)
		}
		return nil, 0, false
	}
	return cells, s.rows.Line(), true
}

// nextContact returns the next accepted row.
func (s *source) nextContact() (contactfile.Contact, bool) {
	for {
		cells, line, ok := s.next()
		if !ok {
			return contactfile.Contact{}, false
		}
		if s.data++; s.data > contactfile.MaxRows {
			s.readErr = apierror.BadRequest("too_many_rows", fmt.Sprintf("An import takes at most %d rows; split the file.", contactfile.MaxRows))
			return contactfile.Contact{}, false
		}
		if c, ok := s.im.Row(line, cells); ok {
			return c, true
		}
	}
}

// Read implements io.Reader for COPY: the stream's header, the accepted rows, its trailer. It fails with
// the reader's error when the file could not be read to the end (COPY then fails, and the caller reports
// s.err).
func (s *source) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if s.done {
			return 0, io.EOF
		}
		s.fill()
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// fill encodes the next rows into buf, up to copyChunk bytes.
func (s *source) fill() {
	b := s.buf[:0]
	if s.buf == nil {
		b = append(make([]byte, 0, copyChunk+4096), copyHeader...)
	}
	for len(b) < copyChunk {
		if len(s.batch) == 0 {
			batch, ok := <-s.batches
			if !ok {
				// The reader has returned (closing batches is its last act), so readErr is settled.
				if s.err = s.readErr; s.err == nil {
					b = append(b, copyTrailer...)
					s.done = true
				}
				break
			}
			s.batch = batch
		}
		c := s.batch[0]
		s.batch = s.batch[1:]
		if b, s.err = s.stage(b, c); s.err != nil {
			break
		}
	}
	s.buf, s.pending = b, b
}

// stage appends an accepted row's staging columns (plan.columns order) to b.
func (s *source) stage(b []byte, c contactfile.Contact) ([]byte, error) {
	id, createdAt, err := s.ids.Next()
	if err != nil {
		return b, err
	}
	if s.staged == 0 || bytes.Compare(id[:], s.lo[:]) < 0 {
		s.lo = id
	}
	if bytes.Compare(id[:], s.hi[:]) > 0 {
		s.hi = id
	}
	b = copyRowStart(b, len(s.plan.columns))
	b = copyText(copyTime(copyUUID(b, id), createdAt), c.Email)
	for _, f := range s.plan.fields {
		b = f.encode(b, c, s.at)
	}
	s.staged++
	return b, nil
}
