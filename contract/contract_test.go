package contract_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	ht "github.com/ogen-go/ogen/http"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/outflowhq/outflow/apitest"
	"github.com/outflowhq/outflow/gen/api"
)

var (
	ctxType       = reflect.TypeOf((*context.Context)(nil)).Elem()
	errType       = reflect.TypeOf((*error)(nil)).Elem()
	uuidType      = reflect.TypeOf(uuid.UUID{})
	timeType      = reflect.TypeOf(time.Time{})
	urlType       = reflect.TypeOf(url.URL{})
	rawType       = reflect.TypeOf(jx.Raw{})
	multipartType = reflect.TypeOf(ht.MultipartFile{})
)

// requestVariants picks the concrete body for request types ogen generates as interfaces (one operation
// accepting several content types); reflection cannot list an interface's implementations.
var requestVariants = map[reflect.Type]reflect.Type{
	reflect.TypeOf((*api.TrackingUnsubscribeReq)(nil)).Elem(): reflect.TypeOf(&api.UnsubscribeForm{}),
}

// specOperationIDs lists every operationId of the contract.
func specOperationIDs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../openapi/openapi.yaml")
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	var ids []string
	for _, item := range doc.Paths {
		for method, node := range item {
			switch method {
			case "get", "post", "put", "patch", "delete":
				var op struct {
					OperationID string `yaml:"operationId"`
				}
				require.NoError(t, node.Decode(&op))
				require.NotEmpty(t, op.OperationID)
				ids = append(ids, op.OperationID)
			}
		}
	}
	sort.Strings(ids)
	return ids
}

var notImplementedID = regexp.MustCompile(`^Operation (\S+) is not implemented yet\.$`)

// TestEveryOperationAnswersPerContract walks the whole SDK. An operation whose area has not shipped must
// answer 501 not_implemented naming its operation id; any other answer must be a declared success, a client
// error or a 503 (capability not configured) in the envelope, never a 500 and never a body the SDK cannot
// decode and validate.
func TestEveryOperationAnswersPerContract(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	client := env.Client(t, env.Bootstrap(t, "acme").APIKey)
	ids := specOperationIDs(t)

	cv := reflect.ValueOf(client)
	ct := cv.Type()
	called, answered501, notImplemented := 0, 0, map[string]bool{}
	for i := range ct.NumMethod() {
		m := ct.Method(i)
		mt := m.Type
		if mt.NumIn() < 2 || mt.In(1) != ctxType || mt.Out(mt.NumOut()-1) != errType {
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			args := []reflect.Value{cv, reflect.ValueOf(context.Background())}
			for j := 2; j < mt.NumIn(); j++ {
				if mt.IsVariadic() && j == mt.NumIn()-1 {
					break
				}
				arg := reflect.New(mt.In(j)).Elem()
				fill(arg, "", 0)
				args = append(args, arg)
			}
			out := m.Func.Call(args)
			err, _ := out[len(out)-1].Interface().(error)
			called++
			if err == nil {
				return // a declared success, decoded and validated by the SDK
			}
			var se *api.ErrorStatusCode
			require.True(t, errors.As(err, &se), "%s: the answer is not one the contract declares: %v", m.Name, err)
			require.NotEqual(t, 500, se.StatusCode, "%s: %s", m.Name, se.Response.Message)
			require.NotEmpty(t, se.Response.RequestID)
			if se.StatusCode == 501 {
				require.Equal(t, "not_implemented", se.Response.Code)
				match := notImplementedID.FindStringSubmatch(se.Response.Message)
				require.NotNil(t, match, se.Response.Message)
				notImplemented[match[1]] = true
				answered501++
				return
			}
			// 503 is the contract's "capability unavailable" (a provider or passkeys not configured here).
			require.True(t, se.StatusCode < 500 || se.StatusCode == 503, "%s: %d %s", m.Name, se.StatusCode, se.Response.Message)
		})
	}
	require.Equal(t, len(ids), called, "every operation of the spec is called exactly once")
	for id := range notImplemented {
		require.Contains(t, ids, id, "501 names a real operation id")
	}
	// Each 501 names a different operation: a static segment routed to its {id} sibling (/unibox/count vs
	// /unibox/{id}) would name the sibling twice.
	require.Equal(t, answered501, len(notImplemented), "every call reached its own operation")
	t.Logf("%d operations called, %d not implemented yet", called, len(notImplemented))
}

// filler builds requests by reflection. ids, when set, supplies every uuid (and every string field named ID)
// instead of fresh random ones: the cross-organization probe fills requests with another tenant's ids.
type filler struct {
	ids func() uuid.UUID
}

// fill makes v a value the contract accepts: required fields set with plausible values, enums at their
// first value, optional fields left out, sum types set to their first variant.
func fill(v reflect.Value, name string, depth int) { filler{}.fill(v, name, depth) }

func (f filler) fill(v reflect.Value, name string, depth int) {
	if depth > 8 {
		return
	}
	t := v.Type()
	switch t {
	case uuidType:
		id := uuid.New()
		if f.ids != nil {
			id = f.ids()
		}
		v.Set(reflect.ValueOf(id))
		return
	case timeType:
		v.Set(reflect.ValueOf(time.Now().UTC().Truncate(time.Second)))
		return
	case urlType:
		u, _ := url.Parse("https://example.com/callback")
		v.Set(reflect.ValueOf(*u))
		return
	case rawType:
		v.Set(reflect.ValueOf(jx.Raw(`{}`)))
		return
	case multipartType:
		v.Set(reflect.ValueOf(ht.MultipartFile{Name: "contacts.csv", File: strings.NewReader("email\nlead@example.com\n")}))
		return
	}
	if setFirstEnumValue(v) {
		return
	}
	if impl, ok := requestVariants[t]; ok {
		c := reflect.New(impl.Elem())
		f.fill(c.Elem(), name, depth+1)
		v.Set(c)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
		f.fill(v.Elem(), name, depth+1)
	case reflect.Struct:
		if strings.HasPrefix(t.Name(), "Opt") {
			return // optional: leave unset
		}
		if strings.HasPrefix(t.Name(), "Nil") {
			if val := v.FieldByName("Value"); val.IsValid() {
				f.fill(val, name, depth+1)
			}
			return
		}
		if f.fillSum(v, depth) {
			return
		}
		for i := range t.NumField() {
			if fld := t.Field(i); fld.IsExported() {
				f.fill(v.Field(i), fld.Name, depth+1)
			}
		}
	case reflect.String:
		if f.ids != nil && (name == "ID" || strings.HasSuffix(name, "ID")) {
			v.SetString(f.ids().String())
			return
		}
		v.SetString(sampleString(name))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Slice:
		s := reflect.MakeSlice(t, 1, 1)
		f.fill(s.Index(0), name, depth+1)
		v.Set(s)
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
	case reflect.Interface:
		panic(fmt.Sprintf("contract test: add a requestVariants entry for %s", t))
	}
}

// setFirstEnumValue sets an ogen enum (a named type with AllValues) to its first value.
func setFirstEnumValue(v reflect.Value) bool {
	m := v.Addr().MethodByName("AllValues")
	if !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 1 {
		return false
	}
	all := m.Call(nil)[0]
	if all.Kind() != reflect.Slice || all.Len() == 0 || all.Type().Elem() != v.Type() {
		return false
	}
	v.Set(all.Index(0))
	return true
}

// fillSum sets an ogen sum type (a struct with a Type discriminator and one field per variant) through the
// setter of its first variant, which also sets the discriminator.
func (f filler) fillSum(v reflect.Value, depth int) bool {
	t := v.Type()
	typ, ok := t.FieldByName("Type")
	if !ok || typ.Type.Kind() != reflect.String || typ.Type.Name() != t.Name()+"Type" || t.NumField() < 2 {
		return false
	}
	for i := range t.NumField() {
		fld := t.Field(i)
		if fld.Name == "Type" {
			continue
		}
		set := v.Addr().MethodByName("Set" + fld.Name)
		if !set.IsValid() || !v.Addr().MethodByName("Is"+fld.Name).IsValid() {
			continue // a plain struct with a field called Type, not a sum type
		}
		arg := reflect.New(fld.Type).Elem()
		f.fill(arg, fld.Name, depth+1)
		set.Call([]reflect.Value{arg})
		return true
	}
	return false
}

// sampleString picks a value a field of that name accepts.
func sampleString(field string) string {
	f := strings.ToLower(field)
	switch {
	case strings.Contains(f, "email"), f == "recipient", f == "to":
		return "lead@example.com"
	case strings.Contains(f, "domain"), strings.Contains(f, "host"):
		return "example.com"
	case strings.Contains(f, "url"), strings.Contains(f, "uri"), strings.Contains(f, "website"), strings.Contains(f, "logo"):
		return "https://example.com/x"
	case strings.Contains(f, "timezone"):
		return "UTC"
	case strings.Contains(f, "password"):
		return "correct horse battery staple"
	case strings.Contains(f, "date"):
		return "2026-11-23"
	case strings.Contains(f, "color"):
		return "#1e90ff"
	case f == "role":
		return "member"
	case f == "token":
		return "0123456789abcdef"
	default:
		return "sample"
	}
}
