function add(a: number, b: number): number {
    return a + bla«nk_val»ue;
}
