import XCTest
@testable import QTraceSched
