// The short-name rules on real demangled names (swift-demangle's output for a program built by
// `swiftc -g`: closures, async functions and their continuations, an actor, nested and generic
// functions), and on C and C++ names, which stay as they are.
import XCTest
@testable import QTraceSymbols

final class ShortNameTests: XCTestCase {
    let swiftNames: [(linkage: String, demangled: String, short: String)] = [
        ("$s1t4loadyySiF", "t.load(Swift.Int) -> ()", "load(_:)"),
        ("$s1t4loadyySiFyyYbcfU_", "closure #1 @Sendable () -> () in t.load(Swift.Int) -> ()", "closure #1 in load(_:)"),
        ("$s1t4loadyySiFyyYbcfU_TA", "partial apply forwarder for closure #1 @Sendable () -> () in t.load(Swift.Int) -> ()",
         "closure #1 in load(_:)"),
        ("$s1t6LoaderV7loadAllyyFZ", "static t.Loader.loadAll() -> ()", "Loader.loadAll()"),
        ("$s1t6LoaderV7loadAllyyFZyyXEfU_", "closure #1 () -> () in static t.Loader.loadAll() -> ()",
         "closure #1 in Loader.loadAll()"),
        ("$s1t11fetchRecord2idS2i_tYaF", "t.fetchRecord(id: Swift.Int) async -> Swift.Int", "fetchRecord(id:)"),
        ("$s1t11fetchRecord2idS2i_tYaFTQ0_", "(1) await resume partial function for t.fetchRecord(id: Swift.Int) async -> Swift.Int",
         "fetchRecord(id:) (await #1)"),
        ("$s1t11fetchRecord2idS2i_tYaFTY1_", "(2) suspend resume partial function for t.fetchRecord(id: Swift.Int) async -> Swift.Int",
         "fetchRecord(id:) (suspend #2)"),
        ("$s1t5StoreC3addyySiYaF", "t.Store.add(Swift.Int) async -> ()", "Store.add(_:)"),
        ("$s1t5StoreC3addyySiYaFTY0_", "(1) suspend resume partial function for t.Store.add(Swift.Int) async -> ()",
         "Store.add(_:) (suspend #1)"),
        ("$s1t5StoreC5itemsSaySiGvg", "t.Store.items.getter : [Swift.Int]", "Store.items.getter"),
        ("$s1t5StoreC5itemsSaySiGvM.resume.0", "t.Store.items.modify : [Swift.Int] with unmangled suffix \".resume.0\"",
         "Store.items.modify"),
        ("$s1t5StoreCACycfc", "t.Store.init() -> t.Store", "Store.init()"),
        ("$s1t5StoreCfD", "t.Store.__deallocating_deinit", "Store.__deallocating_deinit"),
        ("$s1t5outerSiyF5innerL_yS2iF", "inner #1 (Swift.Int) -> Swift.Int in t.outer() -> Swift.Int", "inner(_:) in outer()"),
        ("$s1t7genericyxx_xtSLRzlF", "t.generic<A where A: Swift.Comparable>(A, A) -> A", "generic(_:_:)"),
        ("$s1tyyYacfU_", "closure #1 () async -> () in t", "closure #1 in t"),
        ("$s1tyyYacfU_TATQ0_", "(1) await resume partial function for partial apply forwarder for closure #1 () async -> () in t",
         "closure #1 in t (await #1)"),
        ("$sSTsE3mapySayqd__Gqd__7ElementQzqd_0_YKXEqd_0_YKs5ErrorRd_0_r0_lF",
         "(extension in Swift):Swift.Sequence.map<A, B where B1: Swift.Error>((A.Element) throws(B1) -> A1) throws(B1) -> [A1]",
         "Sequence.map(_:)"),
        ("$sScTss5NeverORs_rlE4name8priority9operationScTyxABGSSSg_ScPSgxyYaYAcntcfC",
         "(extension in Swift):Swift.Task< where B == Swift.Never>.init(name: Swift.String?, priority: Swift.TaskPriority?, operation: __owned @isolated(any) () async -> A) -> Swift.Task<A, Swift.Never>",
         "Task.init(name:priority:operation:)"),
        ("$ss5print_9separator10terminatoryypd_S2StF",
         "Swift.print(_: Any..., separator: Swift.String, terminator: Swift.String) -> ()", "print(_:separator:terminator:)"),
        ("$sSa22_allocateUninitializedySayxG_SpyxGtSiFZ8Dispatch0C13WorkItemFlagsV_Tt0gq5",
         "generic specialization <serialized, Dispatch.DispatchWorkItemFlags> of static Swift.Array._allocateUninitialized(Swift.Int) -> ([A], Swift.UnsafeMutablePointer<A>)",
         "Array._allocateUninitialized(_:)"),
        ("$s1t5StoreCScAAAScA15unownedExecutorScevgTW",
         "protocol witness for Swift.Actor.unownedExecutor.getter : Swift.UnownedSerialExecutor in conformance t.Store : Swift.Actor in t",
         "Actor.unownedExecutor.getter in Store"),
        // Private declarations carry a discriminator (SwiftPM's own names, from a real trace).
        ("$s5Basics12AsyncProcessC13waitUntilExit33_A45A6F5257E83D83B8CB0B37231C56C2LLyyys6ResultOyAA0bC0Vs5Error_pGYbcFyyYbcfU0_TA",
         "partial apply forwarder for closure #2 @Sendable () -> () in Basics.AsyncProcess.(waitUntilExit in _A45A6F5257E83D83B8CB0B37231C56C2)(@Sendable (Swift.Result<Basics.AsyncProcessResult, Swift.Error>) -> ()) -> ()",
         "closure #2 in AsyncProcess.waitUntilExit(_:)"),
        ("$s21swift_package_manager7SwiftPMV4main33_065DA1373B13B3DFAF1A7A3E550E179BLL8execNameySSSg_tYaFZTf4dn_nTY0_",
         "(1) suspend resume partial function for function signature specialization <Arg[1] = Dead> of static swift_package_manager.SwiftPM.(main in _065DA1373B13B3DFAF1A7A3E550E179B)(execName: Swift.String?) async -> ()",
         "SwiftPM.main(execName:) (suspend #1)"),
        ("$sIegh_IeyBh_TR",
         "reabstraction thunk helper from @escaping @callee_guaranteed @Sendable () -> () to @escaping @callee_unowned @convention(block) @Sendable () -> ()",
         "reabstraction thunk"),
    ]

    func testSwiftNames() {
        for name in swiftNames {
            XCTAssertEqual(ShortName.make(demangled: name.demangled, linkageName: name.linkage), name.short, name.demangled)
        }
    }

    func testCAndCxxNamesAreKept() {
        XCTAssertEqual(ShortName.make(demangled: "worker_fn", linkageName: "worker_fn"), "worker_fn")
        XCTAssertEqual(ShortName.make(demangled: "ns::Foo::bar(int)", linkageName: "ns::Foo::bar(int)"), "ns::Foo::bar(int)")
    }

    /// When swift-demangle was unavailable the "demangled" name is the mangled one: kept whole.
    func testMangledNameIsKept() {
        XCTAssertEqual(ShortName.make(demangled: "$s1t4loadyySiF", linkageName: "$s1t4loadyySiF"), "$s1t4loadyySiF")
    }

    func testThunks() {
        XCTAssertTrue(ShortName.isThunk(swiftNames.last!.demangled))
        XCTAssertTrue(ShortName.isThunk("partial apply forwarder for reabstraction thunk helper from @escaping @callee_guaranteed () -> () to @escaping @callee_unowned @convention(block) () -> ()"))
        XCTAssertTrue(ShortName.isThunk("thunk for @escaping @callee_guaranteed () -> ()"))
        XCTAssertFalse(ShortName.isThunk("closure #1 @Sendable () -> () in t.load(Swift.Int) -> ()"))
        XCTAssertFalse(Symbolizer.isThunk(SymbolInfo(function: "worker_fn", module: "a", offset: 0, status: .ok)))
    }

    /// Names that do not follow the grammar still give something, never a crash or an empty name.
    func testOddNames() {
        for odd in ["", "(", ")", "<<<", "in in in", " #", "closure #", "a.b.c(", "(1) await resume partial function for ",
                    "generic specialization <a of b", "x -> y in z"] {
            let short = ShortName.make(demangled: odd, linkageName: "$sodd")
            XCTAssertEqual(short.isEmpty, odd.isEmpty, odd)
        }
    }
}
