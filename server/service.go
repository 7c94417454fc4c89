package server

import (
	"net/http"
	"time"
)

// defaultServiceProperties is the document Get Service Properties
// returns until a client sets one.
const defaultServiceProperties = `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>` +
	`<Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>` +
	`<HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>` +
	`<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>` +
	`<Cors /></StorageServiceProperties>`

// serviceOp serves Get/Set Table Service Properties and Get Table
// Service Stats. Properties are kept in the store and their CORS rules
// apply (cors.go).
func (q *request) serviceOp(method string) {
	switch {
	case q.res.comp == "properties" && method == http.MethodGet:
		if err := q.authorize(opGetService, "", "", ""); err != nil {
			q.fail(err)
			return
		}
		q.h.propsMu.Lock()
		body := q.h.props
		q.h.propsMu.Unlock()
		if body == nil {
			body = []byte(defaultServiceProperties)
		}
		q.writeXML(http.StatusOK, body)
	case q.res.comp == "properties" && method == http.MethodPut:
		if err := q.authorize(opSetService, "", "", ""); err != nil {
			q.fail(err)
			return
		}
		body, err := q.readBody()
		if err != nil {
			q.fail(err)
			return
		}
		if err := q.h.setServiceProperties(q.r.Context(), body); err != nil { // cors.go: validated, stored, applied
			q.fail(err)
			return
		}
		q.w.Header().Set("Content-Length", "0")
		q.w.WriteHeader(http.StatusAccepted)
	case q.res.comp == "stats" && method == http.MethodGet:
		if err := q.authorize(opGetService, "", "", ""); err != nil {
			q.fail(err)
			return
		}
		body := `<?xml version="1.0" encoding="utf-8"?><StorageServiceStats><GeoReplication><Status>live</Status><LastSyncTime>` +
			time.Now().UTC().Format(http.TimeFormat) + `</LastSyncTime></GeoReplication></StorageServiceStats>`
		q.writeXML(http.StatusOK, []byte(body))
	default:
		q.fail(errMethodNotAllowed)
	}
}

func (q *request) writeXML(status int, body []byte) {
	q.w.Header().Set("Content-Type", "application/xml")
	q.w.Header().Set("Content-Length", itoa(len(body)))
	q.w.WriteHeader(status)
	_, _ = q.w.Write(body)
}
