fn main() {
    println!("taco");
}
