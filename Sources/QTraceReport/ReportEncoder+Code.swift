// Code identity in the report data: the items' `site` column, the `taskJobs` table, and the
// header's `codes`, `sites` and `tasks` (docs/report-data.md).
import QTraceViewModel

extension ReportEncoder {
    /// The items' site column, in the items table's (sorted) order; called while that table
    /// is open. Absent when no item has a site (traces without code identity cost nothing).
    mutating func writeItemSites(order: [Int32]) {
        let sites = input.items.site
        guard sites.count == input.items.count, sites.contains(where: { $0 >= 0 }) else { return }
        // One byte per item up to 127 sites before deflate; runs of one site (a loop
        // enqueuing the same closure) deflate to almost nothing. (Byte planes measured the same.)
        payload.column("site", .plus1, as: .i32, order.lazy.map { Int64(max(-1, sites[Int($0)])) })
    }

    /// The jobs of every task, as (task, item row) pairs in task order, jobs in run order.
    mutating func writeTaskJobs() {
        var task: [Int64] = [], item: [Int64] = []
        for (t, swiftTask) in input.tasks.enumerated() {
            for job in swiftTask.jobs where job >= 0 && job < layout.rank.count {
                task.append(Int64(t))
                item.append(Int64(layout.rank[job]))
            }
        }
        guard !task.isEmpty else { return }
        payload.beginTable("taskJobs", rows: task.count)
        payload.column("task", .delta, as: .i32, task)
        payload.column("item", .delta, as: .i32, item)
    }

    func locationJSON(_ location: ReportCodeLocation) -> JSONValue {
        .object([
            ("name", .string(location.name)), ("symbol", .string(location.symbol)),
            ("file", .string(location.file)), ("line", .int(location.line)),
        ])
    }

    func codeJSON(_ code: ReportCode) -> JSONValue {
        .object([
            ("kind", .string(code.kind)), ("name", .string(code.what.name)), ("symbol", .string(code.what.symbol)),
            ("file", .string(code.what.file)), ("line", .int(code.what.line)),
        ])
    }

    func siteJSON(_ site: ReportSite) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("code", .int(site.code)), ("kind", .string(site.kind)),
            ("from", site.from.map(locationJSON) ?? .null),
        ]
        if !site.stack.isEmpty { fields.append(("stack", .array(site.stack.map(locationJSON)))) }
        return .object(fields)
    }

    func taskJSON(_ task: ReportTask) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("id", .int(task.id)), ("parent", .int(task.parent)), ("onMainActor", .bool(task.onMainActor)),
            ("jobs", .int(task.jobs.count)), ("functions", .ints(task.functions)),
        ]
        if task.runtime { fields.append(("runtime", .bool(true))) }
        return .object(fields)
    }

    func actorJSON(_ actor: ReportActor) -> JSONValue {
        .object([
            ("name", .string(actor.name)), ("type", .string(actor.type)), ("visits", .int(actor.visits.count)),
            ("runNs", .int(actor.runNs)), ("waitNs", .int(actor.waitNs)), ("peakQueueDepth", .int(actor.peakQueueDepth)),
        ])
    }

    /// Every actor's visits, as (actor, start, duration, wait, task) rows in actor order.
    mutating func writeActorVisits() {
        var actor: [Int64] = [], start: [Int64] = [], duration: [Int64] = [], wait: [Int64] = [], task: [Int64] = []
        for (a, reportActor) in input.actors.enumerated() {
            for v in reportActor.visits {
                actor.append(Int64(a)); start.append(v.startNs); duration.append(max(0, v.endNs - v.startNs))
                wait.append(max(0, v.waitNs)); task.append(Int64(v.task))
            }
        }
        guard !actor.isEmpty else { return }
        payload.beginTable("actorVisits", rows: actor.count)
        payload.column("actor", .delta, as: .i32, actor)
        payload.column("start", .uvarint, as: .f64, start)
        payload.column("duration", .uvarint, as: .f64, duration)
        payload.column("wait", .uvarint, as: .f64, wait)
        payload.column("task", .plus1, as: .i32, task)
    }
}
