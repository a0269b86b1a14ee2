package avatar

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The limits of part 1: an avatar is at most 2 MB and 1024 x 1024 px.
const (
	MaxBytes = 2 << 20
	MaxSide  = 1024
)

// URLPath is where stored avatars are served, under the deployment root (outside /v1: browsers fetch them
// without a credential, from <img> tags).
const URLPath = "/avatars/"

// Why an upload is refused.
var (
	ErrNotImage      = errors.New("avatar: not a PNG or JPEG image")
	ErrTooLarge      = fmt.Errorf("avatar: larger than %d bytes", MaxBytes)
	ErrTooManyPixels = fmt.Errorf("avatar: larger than %d x %d pixels", MaxSide, MaxSide)
)

// Check sniffs data and returns the file extension its format is stored under (".png" or ".jpg"), or why it
// cannot be an avatar. Dimensions are read from the header before anything is decoded, so a small file that
// claims a huge image is refused without allocating for it.
func Check(data []byte) (string, error) {
	if len(data) > MaxBytes {
		return "", ErrTooLarge
	}
	var ext, format string
	switch http.DetectContentType(data) {
	case "image/png":
		ext, format = ".png", "png"
	case "image/jpeg":
		ext, format = ".jpg", "jpeg"
	default:
		return "", ErrNotImage
	}
	cfg, got, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || got != format {
		return "", ErrNotImage
	}
	if cfg.Width > MaxSide || cfg.Height > MaxSide {
		return "", ErrTooManyPixels
	}
	// A valid header on a truncated or corrupt body would be stored and then shown broken.
	if format == "png" {
		_, err = png.Decode(bytes.NewReader(data))
	} else {
		_, err = jpeg.Decode(bytes.NewReader(data))
	}
	if err != nil {
		return "", ErrNotImage
	}
	return ext, nil
}

// namePattern is every name NewName can produce; anything else is never read, written or served.
var namePattern = regexp.MustCompile(`^[0-9a-f]{32}\.(png|jpg)$`)

// NewName returns a fresh random file name with extension ext.
func NewName(ext string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:]) + ext
}

// NameOf returns the stored file name behind an avatar URL, or "" when the URL is not one of ours.
func NameOf(url string) string {
	i := strings.LastIndex(url, URLPath)
	if i < 0 {
		return ""
	}
	name := url[i+len(URLPath):]
	if !namePattern.MatchString(name) {
		return ""
	}
	return name
}

// Store keeps avatar files; a local directory today, object storage behind the same two calls later.
type Store interface {
	// Put stores data under name, replacing nothing (names are fresh).
	Put(ctx context.Context, name string, data []byte) error
	// Delete removes name; a name already gone is not an error.
	Delete(ctx context.Context, name string) error
}

// Dir is a Store in a local directory, created on first use. It is also the read-only HTTP handler that
// serves the stored files under URLPath.
type Dir string

var _ Store = Dir("")

// Put writes the file through a temporary name and renames it into place, so a reader never sees half a file.
func (d Dir) Put(_ context.Context, name string, data []byte) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("avatar: invalid name %q", name)
	}
	if err := os.MkdirAll(string(d), 0o750); err != nil {
		return fmt.Errorf("avatar: create directory: %w", err)
	}
	tmp, err := os.CreateTemp(string(d), ".upload-*")
	if err != nil {
		return fmt.Errorf("avatar: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("avatar: write: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("avatar: write: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o640); err != nil {
		return fmt.Errorf("avatar: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(string(d), name)); err != nil {
		return fmt.Errorf("avatar: %w", err)
	}
	return nil
}

// Delete removes the file.
func (d Dir) Delete(_ context.Context, name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("avatar: invalid name %q", name)
	}
	if err := os.Remove(filepath.Join(string(d), name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("avatar: %w", err)
	}
	return nil
}

// ServeHTTP serves one stored avatar at URLPath<name>. Only names of the stored form are looked up, so no
// other file of the directory (or outside it) and no listing is ever served. The content is immutable under
// its name, so clients may cache it for good.
func (d Dir) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, URLPath)
	if !ok || !namePattern.MatchString(name) {
		http.NotFound(w, r)
		return
	}
	f, err := os.Open(filepath.Join(string(d), name))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		http.NotFound(w, r)
		return
	}
	ct := "image/png"
	if strings.HasSuffix(name, ".jpg") {
		ct = "image/jpeg"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	http.ServeContent(w, r, name, info.ModTime(), f)
}
