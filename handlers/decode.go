package handlers

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/ogen-go/ogen/ogenerrors"
	"github.com/ogen-go/ogen/openapi"
	"github.com/ogen-go/ogen/validate"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/inbox/unibox"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// The codes of requests the server cannot read, as clients branch on them:
//
//   - invalid_body: the body is not JSON or not the shape the operation takes (a wrong type, a missing field);
//   - invalid_request: a body field breaks its rule (an enum, a list's length), or the request as a whole
//     cannot be read (content type, missing body);
//   - invalid_parameter: a query or header parameter cannot be read or breaks its rule;
//   - invalid_text: some text holds a NUL character or bytes that are not UTF-8 (see RefuseInvalidText);
//   - number_out_of_range: a number lies outside the range its field accepts;
//   - text_too_long: a text is longer than its field accepts;
//   - request_too_large: the body exceeds the size limit (413);
//   - idempotency_key_required: an operation that requires the Idempotency-Key header came without one.
//
// Every message names the field, by its body path (steps[0].subject) or parameter name, and the rule.
const (
	codeInvalidBody      = "invalid_body"
	codeInvalidParameter = "invalid_parameter"
	codeOutOfRange       = "number_out_of_range"
	codeTextTooLong      = "text_too_long"
	codeInvalidRequest   = "invalid_request"
)

// DecodeError maps the generated server's request decoding and validation failures to the envelope: 400s
// that name the field and the rule in words, 404 for a path segment that cannot be an id (as an unknown id
// is), 413 for an oversized body. The server's error handler calls it for every error ogen raises itself.
func DecodeError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return apierror.New(http.StatusRequestEntityTooLarge, "request_too_large",
			fmt.Sprintf("The request body exceeds %d bytes.", tooBig.Limit))
	}
	var e *apierror.Error
	if errors.As(err, &e) {
		return e
	}
	if refused := ownRefusal(err); refused != nil {
		return refused
	}
	if missingIdempotencyKey(err) {
		return errIdempotencyKeyRequired
	}
	var (
		param *ogenerrors.DecodeParamError
		body  *ogenerrors.DecodeBodyError
		check *validate.Error
		ctype *validate.InvalidContentTypeError
	)
	switch {
	case errors.As(err, &param) && param.In == openapi.LocationPath:
		// A path segment that cannot be an id names nothing: 404, as an unknown id is.
		return apierror.NotFound("not_found", fmt.Sprintf("Nothing here has that %s: it is not a valid id.", param.Name))
	case errors.As(err, &param):
		code, rule := ruleOf(param.Err, false, codeInvalidParameter)
		return apierror.BadRequest(code, fmt.Sprintf("The %s parameter %s %s.", param.In, param.Name, rule)).WithCause(err)
	case errors.As(err, &body):
		return bodyError(body).WithCause(err)
	case errors.As(err, &check):
		path, cause := failedField(check)
		code, rule := ruleOf(cause, isArrayRule(cause), codeInvalidRequest)
		return apierror.BadRequest(code, fmt.Sprintf("The body field %s %s.", path, rule)).WithCause(err)
	case errors.Is(err, validate.ErrBodyRequired):
		return apierror.BadRequest(codeInvalidRequest, "This operation needs a request body.")
	case errors.As(err, &ctype):
		return apierror.BadRequest(codeInvalidRequest,
			fmt.Sprintf("The Content-Type %q is not one this operation takes.", ctype.ContentType)).WithCause(err)
	case errors.Is(err, http.ErrNotMultipart), errors.Is(err, http.ErrMissingBoundary):
		return apierror.BadRequest(codeInvalidRequest, "The body is not valid multipart/form-data.").WithCause(err)
	}
	var (
		params *ogenerrors.DecodeParamsError
		req    *ogenerrors.DecodeRequestError
	)
	if errors.As(err, &params) {
		return apierror.BadRequest(codeInvalidParameter, "The parameters cannot be read: "+innermost(err)+".").WithCause(err)
	}
	if errors.As(err, &req) {
		return apierror.BadRequest(codeInvalidRequest, "The request body cannot be read: "+innermost(err)+".").WithCause(err)
	}
	if code := ogenerrors.ErrorCode(err); code >= 400 && code < 500 {
		return apierror.New(code, codeInvalidRequest, "The request cannot be read: "+innermost(err)+".").WithCause(err)
	}
	return apierror.Internal(err)
}

// errIdempotencyKeyRequired answers an operation whose contract requires an Idempotency-Key (a run, a product
// event) sent without one, or with an empty one: a retry of such a request must never do the work twice.
var errIdempotencyKeyRequired = apierror.BadRequest("idempotency_key_required",
	"This operation needs an Idempotency-Key header (1 to 255 characters), so a retry never does its work twice.").
	WithFix("Send a fresh unique value, such as a UUID, with each new request, and the same value when retrying it.")

// missingIdempotencyKey reports whether err is the generated decoder's refusal of a request that lacks a
// required Idempotency-Key header.
func missingIdempotencyKey(err error) bool {
	var (
		param *ogenerrors.DecodeParamError
		check *validate.Error
	)
	if !errors.As(err, &param) || param.In != openapi.LocationHeader || !strings.EqualFold(param.Name, "Idempotency-Key") ||
		!errors.As(param.Err, &check) {
		return false
	}
	for _, f := range check.Fields {
		if errors.Is(f.Error, validate.ErrFieldRequired) {
			return true
		}
	}
	return false
}

// paramRefusals give some parameters' refusals a code (and words) of their own, where the operation's clients
// branch on it, by operation name and parameter name; each gets the value the decoder refused.
var paramRefusals = map[string]func(value string) error{
	api.UniboxListOperation + ".folder": unibox.InvalidFolder,
}

// ownRefusal is the refusal paramRefusals gives a parameter the generated decoder rejected as not one of its
// values, or nil.
func ownRefusal(err error) error {
	var (
		op    *ogenerrors.DecodeParamsError
		param *ogenerrors.DecodeParamError
	)
	if !errors.As(err, &op) || !errors.As(err, &param) {
		return nil
	}
	refuse, ok := paramRefusals[op.OperationName()+"."+param.Name]
	msg := innermost(param.Err)
	if !ok || !strings.HasPrefix(msg, "invalid value: ") {
		return nil
	}
	return refuse(strings.TrimPrefix(msg, "invalid value: "))
}

// badToken matches the JSON decoder's syntax error, which carries the byte offset of the offending value.
var badToken = regexp.MustCompile(`unexpected byte \d+ .* at (\d+)$`)

// bodyError names the field of a body the decoder refused: by the byte offset of a syntax or type error when
// the decoder gives one, else by the chain of fields it was decoding (array indices recovered from the body).
func bodyError(body *ogenerrors.DecodeBodyError) *apierror.Error {
	names := decodedFields(body.Err)
	code, rule := ruleOf(body.Err, false, codeInvalidBody)
	var path string
	var missing *validate.Error
	if errors.As(body.Err, &missing) {
		// A required field absent from an object: the decoder reports it as a validation failure.
		field, cause := failedField(missing)
		names = append(names, field)
		code, rule = ruleOf(cause, false, codeInvalidBody)
	}
	if m := badToken.FindStringSubmatch(innermost(body.Err)); m != nil {
		if at, err := strconv.Atoi(m[1]); err == nil {
			path = pathAtOffset(body.Body, at)
		}
		rule = "has a value of the wrong type, or is not valid JSON there"
	}
	if path == "" && len(names) > 0 {
		path = locateField(body.Body, names, errors.Is(body.Err, strconv.ErrRange))
	}
	if path == "" {
		if len(names) == 0 {
			return apierror.BadRequest(codeInvalidBody, "The request body is not valid JSON of the shape this operation takes: "+innermost(body.Err)+".")
		}
		path = strings.Join(names, ".")
	}
	return apierror.BadRequest(code, fmt.Sprintf("The body field %s %s.", path, rule))
}

var decodeField = regexp.MustCompile(`^decode field "(.*)"$`)

// decodedFields lists, outermost first, the fields the JSON decoder was inside when it failed (its errors
// wrap `decode field "name"` at each level).
func decodedFields(err error) []string {
	var names []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		if m := decodeField.FindStringSubmatch(ownMessage(e)); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

// ownMessage is what one layer of a wrapped error adds to the message of the error it wraps.
func ownMessage(e error) string {
	inner := errors.Unwrap(e)
	if inner == nil {
		return e.Error()
	}
	return strings.TrimSuffix(e.Error(), ": "+inner.Error())
}

// innermost is the message of the deepest error of a chain: the decoder's own words without the wrapping.
func innermost(err error) string {
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			return err.Error()
		}
		err = inner
	}
}

// locateField finds the body value the decoder failed on from the field names it reported: the only one so
// named, or, for a number out of range, the first so-named number that does not fit 64 bits, else 32.
func locateField(body []byte, names []string, outOfRange bool) string {
	paths, raws := pathsMatching(body, names)
	if len(paths) == 0 {
		return ""
	}
	if outOfRange {
		for _, bits := range []int{64, 32} {
			for i, raw := range raws {
				if _, err := strconv.ParseInt(string(raw), 10, bits); errors.Is(err, strconv.ErrRange) {
					return paths[i]
				}
			}
		}
	}
	return paths[0]
}

// failedField follows a validation failure down to the first field that broke a rule, returning its path
// (steps[0].subject) and the rule's error.
func failedField(v *validate.Error) (string, error) {
	if len(v.Fields) == 0 {
		return "(unknown)", v
	}
	f := v.Fields[0]
	var inner *validate.Error
	if errors.As(f.Error, &inner) {
		sub, cause := failedField(inner)
		if strings.HasPrefix(sub, "[") {
			return f.Name + sub, cause
		}
		return f.Name + "." + sub, cause
	}
	return f.Name, f.Error
}

// isArrayRule tells a list's length rule from a text's: the generated validators wrap them as "array" and
// "string".
func isArrayRule(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if ownMessage(e) == "array" {
			return true
		}
	}
	return false
}

var (
	lessThan    = regexp.MustCompile(`value (-?[\d.]+) less than (?:minimum )?(-?[\d.]+)`)
	greaterThan = regexp.MustCompile(`value (-?[\d.]+) greater than (?:maximum )?(-?[\d.]+)`)
)

// ruleOf puts the rule a value broke in words ("must be at most 255 characters long") with the code clients
// branch on: number_out_of_range for a number beyond 32 bits (or beyond its type when decoding),
// text_too_long for text over its maximum, else code (the code such failures have always had where they
// were found: the body's shape, its validation, a parameter).
func ruleOf(err error, list bool, code string) (string, string) {
	var (
		tooLong  *validate.MaxLengthError
		tooShort *validate.MinLengthError
		pattern  *validate.NoRegexMatchError
		num      *strconv.NumError
		when     *time.ParseError
	)
	msg := innermost(err)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return codeOutOfRange, "is outside the range of numbers it accepts"
	case errors.As(err, &tooLong) && list:
		return code, fmt.Sprintf("must hold at most %d items", tooLong.MaxLength)
	case errors.As(err, &tooLong):
		return codeTextTooLong, fmt.Sprintf("must be at most %d characters long", tooLong.MaxLength)
	case errors.As(err, &tooShort) && list:
		return code, fmt.Sprintf("must hold at least %d items", tooShort.MinLength)
	case errors.As(err, &tooShort):
		return code, fmt.Sprintf("must be at least %d characters long", tooShort.MinLength)
	case errors.As(err, &pattern):
		return code, fmt.Sprintf("does not have the expected form (pattern %s)", pattern.Pattern.String())
	case errors.Is(err, validate.ErrFieldRequired), strings.HasSuffix(msg, " not set") && strings.Contains(msg, "parameter "):
		return code, "is required"
	case lessThan.MatchString(msg):
		m := lessThan.FindStringSubmatch(msg)
		return rangeCode(m[1], code), "must be at least " + m[2]
	case greaterThan.MatchString(msg):
		m := greaterThan.FindStringSubmatch(msg)
		return rangeCode(m[1], code), "must be at most " + m[2]
	case strings.HasPrefix(msg, "invalid value: "):
		return code, fmt.Sprintf("must be one of the allowed values, and %q is not", strings.TrimPrefix(msg, "invalid value: "))
	case errors.As(err, &when) && when.Layout == time.DateOnly:
		return code, "must be a date such as 2025-01-31 (YYYY-MM-DD)"
	case errors.As(err, &when):
		return code, "must be a date-time such as 2025-01-31T09:00:00Z (RFC 3339)"
	case uuid.IsInvalidLengthError(err) || strings.Contains(msg, "invalid UUID"):
		return code, "must be a UUID"
	case errors.As(err, &num) && strings.HasPrefix(num.Func, "ParseBool"):
		return code, "must be true or false"
	case errors.As(err, &num):
		return code, "must be a number"
	case strings.Contains(msg, "email") || msg == "no @" || strings.Contains(msg, "@ at"):
		return code, "must be an email address"
	}
	return code, "is not valid: " + msg
}

// rangeCode is number_out_of_range for a value beyond 32 bits (the range of the int4 columns numbers land
// in; the contract bounds every integer without a narrower rule by it), else code: a value inside that range
// broke the field's own rule.
func rangeCode(value, code string) string {
	if n, err := strconv.ParseInt(value, 10, 64); err != nil || n > math.MaxInt32 || n < math.MinInt32 {
		return codeOutOfRange
	}
	return code
}
