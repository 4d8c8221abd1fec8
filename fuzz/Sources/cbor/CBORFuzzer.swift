// Fuzzes the CBOR reader on arbitrary bytes: no trap, error offsets inside the input, an accepted item re-encodes
// (preferred serialization) to no more bytes and decodes back to itself, and reading item by item agrees with
// reading the whole.
import FuzzSupport
import KeywardCBOR

/// Input: the bytes to read, whole (`CBORReader.decode`) and as a sequence of items (`CBORReader.read`).
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(FuzzInput(data, size).bytes)

    let whole: CBORValue?
    do throws(CBORError) {
        let value = try CBORReader.decode(bytes)
        expectRoundTrip(value)
        expect(value.encoded.count <= bytes.count, "the preferred encoding of an accepted input is longer than the input")
        whole = value
    } catch {
        expect((0...bytes.count).contains(error.offset), "error offset \(error.offset) outside \(bytes.count) bytes")
        whole = nil
    }

    var reader = CBORReader(bytes)
    var items: [CBORValue] = []
    var sequenceFailed = false
    while !reader.isAtEnd {
        let start = reader.offset
        do throws(CBORError) {
            let item = try reader.read()
            expect(reader.offset > start, "read an item without moving")
            expectRoundTrip(item)
            items.append(item)
        } catch {
            expect((start...bytes.count).contains(error.offset), "sequential error offset \(error.offset) before the item at \(start)")
            sequenceFailed = true
            break
        }
    }
    if let whole {
        expect(items == [whole], "reading item by item disagrees with reading the whole input")
    } else if !sequenceFailed {
        expect(items.count != 1, "exactly one item read in sequence, the whole input refused")
    }
    return 0
}

private func expectRoundTrip(_ value: CBORValue) {
    do throws(CBORError) {
        let again = try CBORReader.decode(value.encoded)
        expect(again == value, "the re-encoded item decodes to another value")
        expect(again.encoded == value.encoded, "the preferred encoding is not stable")
    } catch {
        expectationFailed("the re-encoded item does not decode: \(error)")
    }
}
