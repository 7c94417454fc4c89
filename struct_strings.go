package tablestore

import "strings"

// hasTagOption reports whether the comma-separated options of a `table:`
// tag (the part after the name) include opt.
func hasTagOption(opts, opt string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// checkTimeField applies the DateTime range of writes to a time.Time
// field's value, so MarshalEntity fails where Insert would.
func checkTimeField(f *fieldPlan, v any) error {
	if _, err := encodeValue(f.name, v); err != nil {
		return newError(err.(*Error).Code, "field %s: %s", f.goName, err.(*Error).Message)
	}
	return nil
}

// fieldEDM names the EDM type whose no-metadata JSON form is a string, by
// the kind of field that receives it. Kinds whose JSON form is never a
// string (Int32, Boolean) are absent.
var fieldEDM = map[fieldKind]string{
	fieldInt64:    "Edm.Int64",
	fieldDouble:   "Edm.Double",
	fieldDateTime: "Edm.DateTime",
	fieldGuid:     "Edm.Guid",
	fieldBinary:   "Edm.Binary",
}

// stringField converts a string property for a field of another kind,
// reading it as the JSON decoder reads a string annotated with the field's
// EDM type. A kind without a string form keeps the string, which
// unmarshalField then refuses as a mismatch.
func stringField(f *fieldPlan, s string) (any, error) {
	edm, ok := fieldEDM[f.kind]
	if !ok {
		return s, nil
	}
	v, err := jsonValue(f.name, s, edm)
	if err != nil {
		return nil, newError(err.(*Error).Code, "field %s: %s", f.goName, err.(*Error).Message)
	}
	return v, nil
}
