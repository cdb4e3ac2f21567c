package admin

import (
	"net/http"
	"time"
)

// moveTaskView is a message move task as GET /_fanout/sqs/movetasks lists
// it: its source queue's name, account and region, and what it moved.
type moveTaskView struct {
	Queue          string    `json:"queue"`
	Account        string    `json:"account"`
	Region         string    `json:"region"`
	Status         string    `json:"status"`
	SourceArn      string    `json:"sourceArn"`
	DestinationArn string    `json:"destinationArn,omitempty"`
	TaskHandle     string    `json:"taskHandle,omitempty"`
	Rate           int       `json:"maxNumberOfMessagesPerSecond"`
	Moved          int64     `json:"moved"`
	ToMove         int64     `json:"toMove"`
	FailureReason  string    `json:"failureReason,omitempty"`
	Started        time.Time `json:"started"`
}

// maxTasksPerQueue is what ListMessageMoveTasks keeps per source queue.
const maxTasksPerQueue = 10

// moveTasks lists the move tasks of every queue of the namespaces asked
// for (?account=, ?region=), each queue's newest first, as
// ListMessageMoveTasks would answer each (at most 10 per queue).
func (d Deps) moveTasks(w http.ResponseWriter, r *http.Request) {
	spaces, ok := d.selected(w, r)
	if !ok {
		return
	}
	out := []moveTaskView{}
	most := maxTasksPerQueue
	for _, ns := range spaces {
		for _, name := range ns.SQS.ListQueues("") {
			q, err := ns.SQS.Queue(name)
			if err != nil {
				continue // deleted meanwhile
			}
			tasks, err := ns.SQS.ListMoveTasks(q.Arn(), &most)
			if err != nil {
				continue
			}
			for _, t := range tasks {
				out = append(out, moveTaskView{Queue: name, Account: ns.Account, Region: ns.Region, Status: t.Status,
					SourceArn: t.SourceArn, DestinationArn: t.DestinationArn, TaskHandle: t.TaskHandle, Rate: t.Rate,
					Moved: t.Moved, ToMove: t.ToMove, FailureReason: t.FailureReason, Started: t.Started})
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tasks": out})
}
