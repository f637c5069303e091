import Foundation
import KioskTestSupport
import XCTest

/// Runs a tool to completion, stdout and stderr together; throws when it has not finished within `timeout` seconds.
func runTool(_ path: String, _ arguments: [String], timeout: Double = 60) throws -> (status: Int32, text: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let deadline = ProcessDeadline(process, seconds: timeout)
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try deadline.finish("\(path) \(arguments.joined(separator: " "))")
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
