package store

import (
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
)

// DescribeDecodeError says what was wrong with a JSON request body (data)
// that did not decode (err): field is the path of the value of the wrong
// type ("messages.0.role"; empty for the body itself) and problem what was
// expected, in words for the person who sent it. A body that is not JSON at
// all, or whose value a field refused, gets field "" and a problem saying
// so. Decoder internals (Go type names) never reach the message.
func DescribeDecodeError(data []byte, err error) (field, problem string) {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		if !json.Valid(data) {
			return "", "请求体不是合法的 JSON"
		}
		return "", "请求体中有无法识别的值"
	}
	want := kindName(te.Type)
	if te.Field == "" {
		return "", "请求体应为" + want
	}
	// A whole number where an integer goes is out of its range (a browser
	// sends 2^63-1 as 9223372036854776000), or written as a decimal (1e2,
	// 100.0), which integer fields do not take.
	if num, ok := strings.CutPrefix(te.Value, "number "); ok && strings.HasSuffix(want, "整数") {
		if f, err := strconv.ParseFloat(num, 64); err == nil && f == math.Trunc(f) && (f >= 0 || want == "整数") {
			limit := float64(1 << 63)
			if want == "非负整数" {
				limit *= 2
			}
			if math.Abs(f) >= limit {
				return te.Field, "字段 " + te.Field + " 超出范围"
			}
			return te.Field, "字段 " + te.Field + " 应为" + want + "（不带小数点或指数）"
		}
	}
	return te.Field, "字段 " + te.Field + " 应为" + want
}

// kindName names the JSON kind a Go type decodes from.
func kindName(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "合法的值"
	}
	switch t.Kind() {
	case reflect.String:
		return "字符串"
	case reflect.Bool:
		return "布尔值"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "整数"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "非负整数"
	case reflect.Float32, reflect.Float64:
		return "数字"
	case reflect.Slice, reflect.Array:
		return "数组"
	case reflect.Map, reflect.Struct:
		return "对象"
	}
	return "合法的值"
}
