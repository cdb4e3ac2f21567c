package api

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/fanout/fanout/internal/awswire"
	"github.com/fanout/fanout/sqs"
)

// handleSource is the source queue ARN a move task handle names, "" when
// it is not one: the handle is base64 of {"taskId":…,"sourceArn":…}.
func handleSource(handle string) string {
	raw, err := base64.StdEncoding.DecodeString(handle)
	if err != nil {
		return ""
	}
	var h struct {
		SourceArn string `json:"sourceArn"`
	}
	if json.Unmarshal(raw, &h) != nil {
		return ""
	}
	return h.SourceArn
}

type taskHandleReply struct {
	TaskHandle string `json:"TaskHandle"`
}

func (r taskHandleReply) json() any                { return r }
func (r taskHandleReply) xml(x *awswire.XMLWriter) { x.Elem("TaskHandle", r.TaskHandle) }

func (h *Handler) startMessageMoveTask(r *request) (reply, error) {
	rate, err := r.in.integer("MaxNumberOfMessagesPerSecond")
	if err != nil {
		return nil, err
	}
	if err := h.intoArn(r, r.in.str("SourceArn")); err != nil {
		return nil, err
	}
	handle, err := r.engine.StartMoveTask(r.in.str("SourceArn"), r.in.str("DestinationArn"), rate)
	if err != nil {
		return nil, err
	}
	return taskHandleReply{handle}, nil
}

type movedReply struct {
	ApproximateNumberOfMessagesMoved int64 `json:"ApproximateNumberOfMessagesMoved"`
}

func (r movedReply) json() any { return r }
func (r movedReply) xml(x *awswire.XMLWriter) {
	x.Int("ApproximateNumberOfMessagesMoved", r.ApproximateNumberOfMessagesMoved)
}

func (h *Handler) cancelMessageMoveTask(r *request) (reply, error) {
	// A handle names its source queue's ARN: the task is in that account
	// and region (a handle that does not decode is the engine's to refuse).
	if src := strings.SplitN(handleSource(r.in.str("TaskHandle")), ":", 6); len(src) == 6 {
		if err := h.into(r, src[4], src[3]); err != nil {
			return nil, sqs.ErrResourceNotFound.New("Task does not exist.")
		}
		q, _ := r.engine.Queue(src[5])
		if err := h.authorized(r, q); err != nil {
			return nil, err
		}
	}
	n, err := r.engine.CancelMoveTask(r.in.str("TaskHandle"))
	if err != nil {
		return nil, err
	}
	return movedReply{n}, nil
}

type moveTaskEntry struct {
	TaskHandle                        string `json:"TaskHandle,omitempty"`
	Status                            string `json:"Status"`
	SourceArn                         string `json:"SourceArn"`
	DestinationArn                    string `json:"DestinationArn,omitempty"`
	MaxNumberOfMessagesPerSecond      int    `json:"MaxNumberOfMessagesPerSecond,omitempty"`
	ApproximateNumberOfMessagesMoved  int64  `json:"ApproximateNumberOfMessagesMoved"`
	ApproximateNumberOfMessagesToMove int64  `json:"ApproximateNumberOfMessagesToMove"`
	FailureReason                     string `json:"FailureReason,omitempty"`
	StartedTimestamp                  int64  `json:"StartedTimestamp"`
}

type moveTasksReply struct {
	Results []moveTaskEntry `json:"Results"`
}

func (r moveTasksReply) json() any { return r }

// xml flattens Results: the API model names each entry
// ListMessageMoveTasksResultEntry (xmlName, flattened), which is what the
// SDKs' Query parsers read; an element called Results reads as no tasks.
func (r moveTasksReply) xml(x *awswire.XMLWriter) {
	for _, t := range r.Results {
		x.Open("ListMessageMoveTasksResultEntry")
		if t.TaskHandle != "" {
			x.Elem("TaskHandle", t.TaskHandle)
		}
		x.Elem("Status", t.Status)
		x.Elem("SourceArn", t.SourceArn)
		if t.DestinationArn != "" {
			x.Elem("DestinationArn", t.DestinationArn)
		}
		if t.MaxNumberOfMessagesPerSecond != 0 {
			x.Int("MaxNumberOfMessagesPerSecond", int64(t.MaxNumberOfMessagesPerSecond))
		}
		x.Int("ApproximateNumberOfMessagesMoved", t.ApproximateNumberOfMessagesMoved)
		x.Int("ApproximateNumberOfMessagesToMove", t.ApproximateNumberOfMessagesToMove)
		if t.FailureReason != "" {
			x.Elem("FailureReason", t.FailureReason)
		}
		x.Int("StartedTimestamp", t.StartedTimestamp)
		x.Close("ListMessageMoveTasksResultEntry")
	}
}

func (h *Handler) listMessageMoveTasks(r *request) (reply, error) {
	max, err := r.in.integer("MaxResults")
	if err != nil {
		return nil, err
	}
	if err := h.intoArn(r, r.in.str("SourceArn")); err != nil {
		return nil, err
	}
	tasks, err := r.engine.ListMoveTasks(r.in.str("SourceArn"), max)
	if err != nil {
		return nil, err
	}
	out := moveTasksReply{Results: make([]moveTaskEntry, len(tasks))}
	for i, t := range tasks {
		out.Results[i] = moveTaskEntry{
			TaskHandle: t.TaskHandle, Status: t.Status, SourceArn: t.SourceArn, DestinationArn: t.DestinationArn,
			ApproximateNumberOfMessagesMoved:  t.Moved,
			ApproximateNumberOfMessagesToMove: t.ToMove, FailureReason: t.FailureReason,
			StartedTimestamp: t.Started.UnixMilli(),
		}
		if t.RateGiven {
			out.Results[i].MaxNumberOfMessagesPerSecond = t.Rate
		}
	}
	return out, nil
}
