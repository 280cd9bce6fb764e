// Code identity wired to the rest: a JOB names the item its thread just enqueued, and at the
// end the CodeIdentity's site resolver rewrites the raw site ids every collaborator kept.
import QTraceFormat

extension ModelBuilder {
    /// A Swift Concurrency job: the item just enqueued by this thread belongs to task `arg`.
    mutating func jobRecorded(_ e: Event, thread t: Int32) {
        guard let i = items.recentItem(id: e.a, submitter: t), e.flags == 0 else { return }  // tasks only
        code.jobRecorded(e, item: i)
    }

    /// Site ids → model indexes, once every SITE record has been read (closeOpenState).
    mutating func resolveSites() {
        code.resolveTasks(mainQueue: queues.mainQueue, items: items)
        let sites = code.siteResolver()
        items.resolveSites(sites)
        threads.resolveBlockedSites(sites.resolve)
        for (a, raw) in code.applySites { model.applies[Int(a)].site = opt(Int32(sites.resolve(raw)) - 1) }
        for c in model.continuations.indices where model.continuations[c].siteRaw != 0 {
            model.continuations[c].siteRaw = sites.resolve(model.continuations[c].siteRaw)
        }
        for (s, raw) in code.sourceHandlerSites { model.sources[s].eventHandlerSite = opt(Int32(sites.resolve(raw)) - 1) }
    }

    /// The code identity's tables become the model's (after `resolveSites` and the operations'
    /// sites); the builder lets go of them so that later writes to the model copy nothing.
    mutating func moveCodeIdentityIntoModel() {
        (model.sites, model.codes, model.modules, model.tasks) = (code.sites, code.codes, code.modules, code.tasks)
        code = CodeIdentity()
    }
}
