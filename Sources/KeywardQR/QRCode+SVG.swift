// A QR code as an SVG image: one path of dark modules, with an accessible label.
extension QRCode {
    /// Standalone SVG of the symbol with its 4-module quiet zone. Coordinates are in modules so the drawing
    /// stays sharp at any scale; `crispEdges` stops anti-aliasing seams between adjacent modules; the white
    /// background keeps the quiet zone light on dark pages, where a transparent one would not scan.
    public func svg(moduleSize: Int = 4, label: String) -> String {
        let quiet = 4
        let extent = size + 2 * quiet
        let pixels = extent * max(1, moduleSize)
        var path = ""
        // One subpath per horizontal run of dark modules keeps the path short.
        for y in 0..<size {
            var x = 0
            while x < size {
                guard isDark(x: x, y: y) else { x += 1; continue }
                let start = x
                while x < size && isDark(x: x, y: y) { x += 1 }
                path += "M\(start + quiet) \(y + quiet)h\(x - start)v1h-\(x - start)z"
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(pixels)" height="\(pixels)" \
            viewBox="0 0 \(extent) \(extent)" shape-rendering="crispEdges" role="img" \
            aria-label="\(Self.xmlEscaped(label))">\
            <rect width="\(extent)" height="\(extent)" fill="#fff"/>\
            <path fill="#000" d="\(path)"/>\
            </svg>
            """
    }

    static func xmlEscaped(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}
