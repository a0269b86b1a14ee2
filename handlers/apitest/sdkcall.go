package apitest

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	ht "github.com/ogen-go/ogen/http"

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

// SDKMethods lists the operation methods of the generated client (those taking a context and returning an
// error last), so tests that must cover every operation walk the SDK rather than a hand-kept list.
func SDKMethods(client *api.Client) []reflect.Method {
	ct := reflect.TypeOf(client)
	var out []reflect.Method
	for i := range ct.NumMethod() {
		m := ct.Method(i)
		mt := m.Type
		if mt.NumIn() >= 2 && mt.In(1) == ctxType && mt.Out(mt.NumOut()-1) == errType {
			out = append(out, m)
		}
	}
	return out
}

// Filler builds SDK requests by reflection: required fields set with plausible values, enums at their first
// value, optional fields left out, sum types set to their first variant. IDs, when set, supplies every uuid
// (and every string field named ID) instead of fresh random ones: a cross-tenant probe fills requests with
// another organization's ids.
type Filler struct {
	IDs func() uuid.UUID
}

// Call calls the SDK method m (from SDKMethods) on client with freshly built arguments (bodies holding readers
// are used up by a call) and returns its results.
func (f Filler) Call(ctx context.Context, client *api.Client, m reflect.Method) []reflect.Value {
	mt := m.Type
	args := []reflect.Value{reflect.ValueOf(client), reflect.ValueOf(ctx)}
	for j := 2; j < mt.NumIn(); j++ {
		if mt.IsVariadic() && j == mt.NumIn()-1 {
			break
		}
		arg := reflect.New(mt.In(j)).Elem()
		f.Fill(arg, "", 0)
		args = append(args, arg)
	}
	return m.Func.Call(args)
}

// CallErr is Call returning only the method's error.
func (f Filler) CallErr(ctx context.Context, client *api.Client, m reflect.Method) error {
	out := f.Call(ctx, client, m)
	err, _ := out[len(out)-1].Interface().(error)
	return err
}

// Fill makes v (of a field called name, depth levels down) a value the contract accepts.
func (f Filler) Fill(v reflect.Value, name string, depth int) {
	if depth > 8 {
		return
	}
	t := v.Type()
	switch t {
	case uuidType:
		id := uuid.New()
		if f.IDs != nil {
			id = f.IDs()
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
		f.Fill(c.Elem(), name, depth+1)
		v.Set(c)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
		f.Fill(v.Elem(), name, depth+1)
	case reflect.Struct:
		if strings.HasPrefix(t.Name(), "Opt") {
			return // optional: leave unset
		}
		if strings.HasPrefix(t.Name(), "Nil") {
			if val := v.FieldByName("Value"); val.IsValid() {
				f.Fill(val, name, depth+1)
			}
			return
		}
		if f.fillSum(v, depth) {
			return
		}
		for i := range t.NumField() {
			if fld := t.Field(i); fld.IsExported() {
				f.Fill(v.Field(i), fld.Name, depth+1)
			}
		}
	case reflect.String:
		if f.IDs != nil && (name == "ID" || strings.HasSuffix(name, "ID")) {
			v.SetString(f.IDs().String())
			return
		}
		v.SetString(SampleString(name))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Slice:
		s := reflect.MakeSlice(t, 1, 1)
		f.Fill(s.Index(0), name, depth+1)
		v.Set(s)
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
	case reflect.Interface:
		panic(fmt.Sprintf("apitest: add a requestVariants entry for %s", t))
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
func (f Filler) fillSum(v reflect.Value, depth int) bool {
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
		f.Fill(arg, fld.Name, depth+1)
		set.Call([]reflect.Value{arg})
		return true
	}
	return false
}

// SampleString picks a value a text field of that name accepts ("sample" when its name says nothing), so a
// call built from the SDK or from the spec passes the server's field rules and reaches the operation.
func SampleString(field string) string {
	f := strings.ToLower(field)
	switch {
	case f == "idempotencykey", f == "idempotency-key":
		return uuid.NewString() // a key reused with another request is refused before the gate
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
