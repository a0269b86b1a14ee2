package handlers

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// checkText sends r through RefuseInvalidText and RefuseInvalidMultipartText and returns the answer and what the next handler read.
func checkText(t *testing.T, r *http.Request) (*httptest.ResponseRecorder, string) {
	t.Helper()
	var seen string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.MultipartForm != nil {
			seen = strings.Join(r.MultipartForm.Value["note"], ",") + "|" + r.MultipartForm.File["file"][0].Filename
		} else if r.PostForm != nil {
			seen = r.PostForm.Encode()
		} else {
			b, _ := io.ReadAll(r.Body)
			seen = string(b)
		}
		w.WriteHeader(204)
	})
	rec := httptest.NewRecorder()
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	RefuseInvalidText(logger, RefuseInvalidMultipartText(logger, next)).ServeHTTP(rec, r)
	return rec, seen
}

func jsonRequest(body string) *http.Request {
	r := httptest.NewRequest("POST", "/v1/x", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

func TestRefuseInvalidTextNamesTheFieldOfBadText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		req  *http.Request
		msg  string
	}{
		{"escaped NUL deep in a body", jsonRequest(`{"steps":[{"a":1},{"subject":"hi\u0000"}]}`),
			"The body field steps[1].subject contains a NUL character"},
		{"raw invalid UTF-8 in a body", jsonRequest("{\"name\":\"a\xffb\"}"),
			"The body field name is not valid UTF-8"},
		{"lone surrogate escape", jsonRequest(`{"tags":["ok","\ud800x"]}`),
			"The body field tags[1] is not valid UTF-8"},
		{"bad key", jsonRequest("{\"meta\":{\"k\xff\":1}}"),
			"A field name in the body field meta is not valid UTF-8"},
		{"top-level string", jsonRequest(`"\u0000"`), "The request body contains a NUL"},
		{"query value", httptest.NewRequest("GET", "/v1/x?search=a%00b", nil),
			"The query parameter search contains a NUL"},
		{"query value bytes", httptest.NewRequest("GET", "/v1/x?search=%ff", nil),
			"The query parameter search is not valid UTF-8"},
		{"path", httptest.NewRequest("GET", "/v1/labels/a%00b", nil), `The URL path segment 3 ("a\x00b") contains a NUL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, _ := checkText(t, tc.req)
			require.Equal(t, 400, rec.Code)
			var env apierror.Envelope
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env))
			require.Equal(t, "invalid_text", env.Code)
			require.Contains(t, env.Message, tc.msg)
		})
	}
}

func TestRefuseInvalidTextHandsGoodBodiesOnIntact(t *testing.T) {
	t.Parallel()
	body := `{"name":"Zoë \u00e9 \ud83d\ude00","list":[1,2.5e3,true,null,{"x":"\"q\\\\"}]}`
	rec, seen := checkText(t, jsonRequest(body))
	require.Equal(t, 204, rec.Code, rec.Body.String())
	require.Equal(t, body, seen)

	// Malformed JSON is left to the decoder, which names the syntax error.
	rec, seen = checkText(t, jsonRequest(`{"name":`))
	require.Equal(t, 204, rec.Code)
	require.Equal(t, `{"name":`, seen)

	form := httptest.NewRequest("POST", "/oauth/token", strings.NewReader("grant_type=x&code=%C3%A9"))
	form.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec, seen = checkText(t, form)
	require.Equal(t, 204, rec.Code)
	require.Equal(t, "code=%C3%A9&grant_type=x", seen)
}

func TestRefuseInvalidTextChecksMultipartFieldsButNotFiles(t *testing.T) {
	t.Parallel()
	build := func(note string) *http.Request {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		require.NoError(t, mw.WriteField("note", note))
		fw, err := mw.CreateFormFile("file", "contacts.xlsx")
		require.NoError(t, err)
		_, _ = fw.Write([]byte("PK\x03\x04\x00\xff binary"))
		require.NoError(t, mw.Close())
		r := httptest.NewRequest("POST", "/v1/contacts/import/preview", &buf)
		r.Header.Set("Content-Type", mw.FormDataContentType())
		return r
	}
	rec, seen := checkText(t, build("fine"))
	require.Equal(t, 204, rec.Code, rec.Body.String())
	require.Equal(t, "fine|contacts.xlsx", seen, "the parsed form reaches the handler")

	rec, _ = checkText(t, build("bad\x00"))
	require.Equal(t, 400, rec.Code)
	require.Contains(t, rec.Body.String(), "The form field note contains a NUL")
}
